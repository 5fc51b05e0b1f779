"""Heads: where each scope's audit trail ends, signed, to keep away from the store.

A hash chain shows a record changed or taken from its middle, but not its newest records
deleted together, nor a whole scope: nothing after them is left to miss them. A heads export
(`AuditHeads.write`, `ag-ui-temporal audit heads`) is a line per scope, `{"scope", "seq",
"hash"}` (its last record, or its anchor once a prune left nothing), and a last line signing
them all under the audit key, `{"heads", "takenAt", "keyId", "mac"}`: the MAC of every line
before it and of that line's other fields. Kept where the database's holders cannot write,
it lets `AuditHeads.verify` (`audit verify --heads FILE`) find any of those scopes that no
longer reaches its head with the same hash (a prune past a head is no loss: its anchor
is signed).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import AsyncIterator, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from ag_ui_temporal.store import audit
from ag_ui_temporal.store.audit_keys import AuditKeys
from ag_ui_temporal.store.tables import audit_anchors, audit_records
from ag_ui_temporal.workflows.contract.audit import canonical

HEAD: Final = ("scope", "seq", "hash")
SIGNATURE: Final = ("heads", "takenAt", "keyId", "mac")

Head = tuple[str, int, str]
"""A scope, the seq its trail ended at, and that record's (or anchor's) hash."""


class HeadsError(ValueError):
    """A heads export that is not one, or not signed by a key of these."""


class AuditHeads:
    """The heads of the store's trails under `keys` (the current one signs)."""

    def __init__(self, engine: AsyncEngine, keys: AuditKeys) -> None:
        self.engine = engine
        self.keys = keys

    async def write(self) -> AsyncIterator[bytes]:
        """The lines of a heads export of the store as it is now."""
        key = self.keys.current
        mac, count = key.hasher(), 0
        async for head in self._heads():
            line = audit.export_line(dict(zip(HEAD, head, strict=True)))
            mac.update(line)
            count += 1
            yield line
        signature = {"heads": count, "takenAt": datetime.now(UTC).isoformat(), "keyId": key.id}
        mac.update(canonical(signature))
        yield audit.export_line({**signature, "mac": mac.hexdigest()})

    async def _heads(self) -> AsyncIterator[Head]:
        t, a = audit_records.c, audit_anchors.c
        after = None
        while True:  # the scopes with records, a page at a time: their last ones
            page = sa.select(t.scope, sa.func.max(t.seq).label("seq")).group_by(t.scope)
            if after is not None:
                page = page.where(t.scope > after)
            ends = page.order_by(t.scope).limit(audit.PAGE).subquery()
            last = sa.select(t.scope, t.seq, t.hash).join(
                ends, sa.and_(t.scope == ends.c.scope, t.seq == ends.c.seq)
            )
            async with self.engine.connect() as db:
                rows = (await db.execute(last.order_by(t.scope))).all()
            for row in rows:
                yield row
            if len(rows) < audit.PAGE:
                break
            after = rows[-1][0]
        after = None
        while True:  # the scopes a prune left empty: their anchors
            empty = sa.select(a.scope, a.seq, a.hash).where(
                ~sa.select(t.id).where(t.scope == a.scope).exists()
            )
            if after is not None:
                empty = empty.where(a.scope > after)
            async with self.engine.connect() as db:
                rows = (await db.execute(empty.order_by(a.scope).limit(audit.PAGE))).all()
            for row in rows:
                yield row
            if len(rows) < audit.PAGE:
                return
            after = rows[-1][0]

    async def verify(self, lines: Iterable[bytes]) -> tuple[int, str | None]:
        """Check a heads export (its lines, as `write` wrote them) against the store.
        Returns how many heads it holds and the first one the store no longer reaches, in
        words (None: nothing it names was lost); `HeadsError`, whatever the store holds, if
        it is not a heads export signed by one of the keys, whole and unchanged."""
        signed = _Signed(self.keys)
        found, chunk = None, list[Head]()
        for head in signed.read(lines):
            chunk.append(head)
            if len(chunk) == audit.PAGE:
                found = found or await self._lost(chunk)
                chunk = []
        if chunk:
            found = found or await self._lost(chunk)
        taken_at = signed.check()
        return signed.count, found and f"{found} (the heads taken at {taken_at})"

    async def _lost(self, heads: list[Head]) -> str | None:
        """The first of `heads` the store no longer reaches, in words."""
        t, a = audit_records.c, audit_anchors.c
        pairs = [(scope, seq) for scope, seq, _ in heads]
        scopes = sorted({scope for scope, _, _ in heads})
        async with self.engine.connect() as db:  # three queries a page of heads
            at = sa.select(t.scope, t.seq, t.hash).where(sa.tuple_(t.scope, t.seq).in_(pairs))
            stored = {(scope, seq): h for scope, seq, h in await db.execute(at)}
            ends = sa.select(t.scope, sa.func.max(t.seq)).where(t.scope.in_(scopes))
            last = dict((await db.execute(ends.group_by(t.scope))).all())
            anchored = sa.select(a.scope, a.seq, a.hash).where(a.scope.in_(scopes))
            anchors = {scope: (seq, h) for scope, seq, h in await db.execute(anchored)}
        for scope, seq, digest in heads:
            if (scope, seq) in stored:
                if stored[scope, seq] != digest:
                    return f"{scope} #{seq} is not the record the heads name"
                continue
            anchor = anchors.get(scope)
            if anchor is not None and anchor[0] >= seq:  # pruned past its head
                if anchor[0] == seq and anchor[1] != digest:
                    return f"{scope}'s anchor (at #{seq}) is not the record the heads name"
                continue
            end = max(last.get(scope, 0), anchor[0] if anchor else 0)
            if end == 0:
                return f"{scope} is gone: its head is #{seq}, the store holds nothing of it"
            lost = f"#{seq} was" if end + 1 == seq else f"#{end + 1}..#{seq} were"
            return f"{scope} ends at #{end}, its head at #{seq}: {lost} deleted"
        return None


class _Signed:
    """A heads export read line by line: its heads, then whether its signature holds."""

    def __init__(self, keys: AuditKeys) -> None:
        # one MAC a key: which one signed is said only at the end
        self.macs = {key.id: key.hasher() for key in keys.all}
        self.count = 0
        self.signature: dict[str, Any] | None = None

    def read(self, lines: Iterable[bytes]) -> Iterator[Head]:
        for number, line in enumerate(lines, 1):
            if self.signature is not None:
                if line.strip():
                    raise HeadsError(f"line {number}: a line after the signature")
                continue
            try:
                fields = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise HeadsError(f"line {number}: not JSON") from None
            if isinstance(fields, dict) and list(fields) == list(SIGNATURE):
                self.signature = fields
                continue
            head = _head(number, fields)
            for mac in self.macs.values():
                mac.update(line)
            self.count += 1
            yield head

    def check(self) -> str:
        """When the heads were taken, if the signature holds; else `HeadsError`."""
        if self.signature is None:
            raise HeadsError("no signature line: not a whole heads export")
        key_id, given = self.signature["keyId"], self.signature["mac"]
        mac = self.macs.get(key_id) if isinstance(key_id, str) else None
        if mac is None:
            raise HeadsError(f"signed with {audit.unknown_key(key_id)}")
        mac.update(canonical({name: self.signature[name] for name in SIGNATURE[:-1]}))
        if not isinstance(given, str) or not hmac.compare_digest(mac.hexdigest(), given):
            raise HeadsError("its signature does not match it: changed since it was taken")
        if self.signature["heads"] != self.count:
            raise HeadsError(
                f"it holds {self.count} heads, its signature {self.signature['heads']}"
            )
        return str(self.signature["takenAt"])


def _head(number: int, fields: Any) -> Head:
    """A heads export's line as a `Head`, or `HeadsError`."""
    if not isinstance(fields, dict) or list(fields) != list(HEAD):
        raise HeadsError(f"line {number}: not a head ({', '.join(HEAD)})")
    scope, seq, digest = fields["scope"], fields["seq"], fields["hash"]
    if not (isinstance(scope, str) and type(seq) is int and isinstance(digest, str)):
        raise HeadsError(f"line {number}: a head's fields of the wrong type")
    return scope, seq, digest
