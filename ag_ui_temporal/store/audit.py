"""The audit trail: every record a workflow sends (`workflows.contract.audit`), kept once per
key in a hash chain per scope, after Temporal has deleted the workflows.

A scope (`thread:<id>`, `chain:<id>`) numbers its records 1, 2, ...; each carries the hash
of the one before (`prev`, `GENESIS` for the first) and its own (`record_hash` of its
exported form): an HMAC under the audit key (`audit_keys`), which the database never holds.
So `AuditLog.verify` finds a record changed, removed, relinked or made up by anyone who went
around this module, even one who recomputed every hash after it; an anchor (where a pruned
trail starts) is keyed too. What a chain cannot show (its newest records, or a whole scope,
deleted) an earlier heads export does (`store.audit_heads`). Reads answer only what a
`Reader` may see; an export (`export`) imports into another store (`import_records`) exactly
as it was, never into a trail that store holds.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, NamedTuple, cast

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.sql.dml import Insert

from ag_ui_temporal.store._insert import insert_if_absent
from ag_ui_temporal.store.audit_keys import AuditKey, AuditKeys
from ag_ui_temporal.store.tables import audit_anchors, audit_readers, audit_records
from ag_ui_temporal.workflows.contract.access import GROUP_PREFIX
from ag_ui_temporal.workflows.contract.audit import CHAIN_SCOPE, AuditBatch, canonical
from ag_ui_temporal.workflows.contract.names import json_line

log = logging.getLogger("ag-ui-temporal")

GENESIS: Final = "0" * 64
"""`prev` of a scope's first record."""
MAX_READ: Final = 1_000
"""The most records one `AuditLog.read` returns."""
PAGE: Final = 500
"""Records per query of `stream`, `verify`, `import_records`, `prune` and `heads`."""
APPEND_ATTEMPTS: Final = 5
"""How often an append that lost a race (another writer took its seq) is redone."""

_EXPORTED: Final = (
    ("scope", "scope"), ("seq", "seq"), ("key", "key"), ("kind", "kind"), ("at", "at"),
    ("threadId", "thread_id"), ("chainId", "chain_id"), ("interruptId", "interrupt_id"),
    ("runId", "run_id"), ("principal", "principal"), ("data", "data"), ("prev", "prev"),
    ("keyId", "key_id"), ("hash", "hash"),
)  # fmt: skip
"""An exported record's keys, in order (then `recordedAt`), and the columns they come from."""
_UNKEYED: Final = ("keyId", "hash", "recordedAt")
"""What a record written before the trail had a key did not hash."""
_ANCHOR: Final = ("anchor", "seq", "hash", "keyId", "mac")
"""An export's anchor line: the scope (`anchor`) and where its trail starts."""
NOT_KEYED: Final = (
    "not keyed: written before the trail had a key, or by someone without it "
    "(`audit verify --allow-unkeyed` accepts what was written before AUDIT_KEY)"
)


@dataclass(frozen=True)
class StoredRecord:
    """One record of the trail, as the store holds it."""

    id: int
    """This database's row id: the API's paging cursor, never exported."""
    scope: str
    seq: int
    key: str
    kind: str
    at: str
    thread_id: str | None
    chain_id: str | None
    interrupt_id: str | None
    run_id: str | None
    principal: str | None
    data: dict[str, Any]
    prev: str
    key_id: str | None
    """The audit key its hash is an HMAC under (None: written before the trail had keys)."""
    hash: str
    recorded_at: datetime

    def exported(self) -> dict[str, Any]:
        """NDJSON export / `GET /audit` form, keys in this order: scope, seq, key, kind, at,
        threadId, chainId, interruptId, runId, principal, data, prev, keyId, hash,
        recordedAt (ISO 8601, UTC). No id."""
        out = {name: getattr(self, column) for name, column in _EXPORTED}
        out["recordedAt"] = _utc(self.recorded_at).isoformat()
        return out


def record_hash(exported: Mapping[str, Any], key: AuditKey | None) -> str:
    """A record's hash: the HMAC-SHA256 under `key` (its `keyId`) of `canonical` of its
    exported form without `hash`; None: a record from before keys, the SHA-256 of its form
    without `keyId`, `hash` and `recordedAt`."""
    if key is None:
        hashed = {name: value for name, value in exported.items() if name not in _UNKEYED}
        return hashlib.sha256(canonical(hashed)).hexdigest()
    return key.mac(canonical({name: v for name, v in exported.items() if name != "hash"}))


def anchor_mac(key: AuditKey, scope: str, seq: int, hash: str) -> str:
    """What a prune signs: this scope's trail starts after #seq, whose hash was `hash`."""
    return key.mac(_anchor_message(key.id, scope, seq, hash))


def ndjson_line(record: StoredRecord) -> bytes:
    """The record's line in an export (and in `GET /audit`'s NDJSON)."""
    return export_line(record.exported())


def export_line(fields: Mapping[str, Any]) -> bytes:
    """One line of an export (a record, an anchor, a head): `json_line`, which stays one line."""
    return json_line(fields).encode() + b"\n"


@dataclass(frozen=True)
class Reader:
    """Who reads: sees records whose scope lists them (principal or one of `group:G`),
    or whose chain's scope (`chain:<chain_id>`) lists them."""

    principal: str
    groups: Sequence[str] = ()
    """The principal's groups (bare names, as its token gives them)."""
    everything: bool = False
    """An auditor: every record."""
    chains: bool = False
    """An approvals admin: every record with a `chain_id` (besides what the scopes give)."""


EVERYTHING: Final = Reader(principal="", everything=True)


@dataclass(frozen=True)
class AuditQuery:
    """Which records: every filter given must hold; by id, from `after` on."""

    scope: str | None = None
    """Records of this trail only (`thread:<id>`, `chain:<id>`)."""
    thread_id: str | None = None
    chain_id: str | None = None
    """Records whose `chain_id` is this (the chain's own and its seats' in inbox threads)."""
    principal: str | None = None
    """Records whose principal (who acted) is this."""
    since: datetime | None = None
    """Records that occurred (`at`) at or after this."""
    after: int | None = None
    """Records with an id above this (the cursor of the page before)."""
    limit: int = 100


@dataclass(frozen=True)
class Broken:
    """The first record (or anchor) `verify` found that does not match its trail."""

    scope: str
    seq: int
    key: str | None
    """None: the scope's anchor."""
    kind: str
    problem: str

    def __str__(self) -> str:
        if self.key is None:
            return f"{self.scope}'s anchor (at #{self.seq}): {self.problem}"
        return f"{_label(self.scope, self.seq, self.kind, self.key)}: {self.problem}"


class Verified(NamedTuple):
    """What `verify` read, and the first thing it found wrong (None: the trail holds)."""

    checked: int
    """Records read."""
    broken: Broken | None
    anchors: int = 0
    """Anchors read."""
    unkeyed: int = 0
    """Records and anchors written before the trail had a key (`allow_unkeyed`)."""


class AuditImportError(ValueError):
    """A line of an import that is no exported record or does not continue its trail."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass
class _Tail:
    """Where a scope's trail ends: its last record's (or its anchor's) seq and hash."""

    seq: int = 0
    hash: str = GENESIS
    known: bool = False
    """Whether the store holds anything of the scope (a record or an anchor)."""


class AuditLog:
    """The `audit_records`, `audit_readers` and `audit_anchors` tables. Without `keys` it
    reads only (the gateway): appending, verifying, importing and pruning need them."""

    def __init__(self, engine: AsyncEngine, keys: AuditKeys | None = None) -> None:
        self.engine = engine
        self._audit_keys = keys

    @property
    def keys(self) -> AuditKeys:
        if self._audit_keys is None:
            raise RuntimeError("this AuditLog has no audit keys: it only reads")
        return self._audit_keys

    async def append(self, batch: AuditBatch) -> int:
        """Append the batch's records to its scope's trail, in order, each once per key (a
        key the store holds is skipped), and add its readers; returns how many were new.

        One transaction. Two writers of one scope (two workers, a zombie activity attempt)
        take turns: on PostgreSQL the scope's lock orders them; on SQLite the second may read
        the tail the first is extending, then hits UNIQUE(key) or UNIQUE(scope, seq), rolls
        back and redoes the whole batch on the new tail.
        """
        key = self.keys.current
        for attempt in range(APPEND_ATTEMPTS):
            try:
                async with self.engine.begin() as db:
                    return await self._append(db, batch, key)
            except IntegrityError:
                if attempt == APPEND_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    async def _append(self, db: AsyncConnection, batch: AuditBatch, key: AuditKey) -> int:
        await _lock(db, batch.scope)
        # Readers first: on SQLite this write takes the database's lock before the tail is read.
        readers = [{"scope": batch.scope, "principal": p} for p in sorted(set(batch.readers))]
        if readers:
            await db.execute(insert_if_absent(self.engine, audit_readers), readers)
        keys = [record.key for record in batch.records]
        # each held key's scope (the batch's own, for a retried attempt)
        held = {k: scope for k, (scope, _) in (await _held(db, keys)).items()} if keys else {}
        tail = await _tail(db, batch.scope)
        now, rows = datetime.now(UTC), []
        for record in batch.records:
            if (scope := held.get(record.key)) is not None:
                if scope != batch.scope:
                    # No workflow writes another scope's key: someone put it there behind
                    # the store's back (`audit verify` names it). Said, as the real one is lost.
                    log.warning(
                        "audit: %s's record %s not written: its key is held in %s",
                        batch.scope, record.key, scope,
                    )  # fmt: skip
                continue
            held[record.key] = batch.scope
            fields = {
                "scope": batch.scope, "seq": tail.seq + 1, "key": record.key,
                "kind": record.kind, "at": record.at, "threadId": record.thread_id,
                "chainId": record.chain_id, "interruptId": record.interrupt_id,
                "runId": record.run_id, "principal": record.principal,
                # as JSON reads it back: what is hashed is what verify will read
                "data": json.loads(canonical(record.data)), "prev": tail.hash,
                "keyId": key.id, "recordedAt": now.isoformat(),
            }  # fmt: skip
            fields["hash"] = record_hash(fields, key)  # the one HMAC a record costs
            rows.append(_row(fields, _instant(record.at), now))
            tail.seq, tail.hash = fields["seq"], fields["hash"]
        if rows:
            await db.execute(sa.insert(audit_records), rows)
        return len(rows)

    async def read(self, query: AuditQuery, reader: Reader) -> list[StoredRecord]:
        """One page of what `reader` may see of `query`, by id (at most `query.limit`)."""
        if not 1 <= query.limit <= MAX_READ:
            raise ValueError(f"an audit read returns 1..{MAX_READ} records, not {query.limit}")
        return await self._page(query, reader, query.after, query.limit)

    async def stream(self, query: AuditQuery, reader: Reader) -> AsyncIterator[StoredRecord]:
        """Every record `reader` may see of `query`, by id, read a page at a time (each page
        on a connection of its own, so a slow consumer holds none); `limit` is ignored."""
        async for page in self._pages(query, reader):
            for record in page:
                yield record

    async def export(self, query: AuditQuery) -> AsyncIterator[bytes]:
        """`audit export`'s lines: every record of `query` (`ndjson_line`), each scope's
        first one after its anchor preceded by the anchor's line (`anchor`, `seq`, `hash`,
        `keyId`, `mac`), which an import of a pruned trail needs."""
        a = audit_anchors.c
        async for page in self._pages(query, EVERYTHING):
            # a query a page: the anchors of the scopes that may start here
            scopes = {record.scope for record in page if record.seq > 1}
            anchors = {}
            if scopes:
                select = sa.select(a.scope, a.seq, a.hash, a.key_id, a.mac)
                async with self.engine.connect() as db:
                    rows = await db.execute(select.where(a.scope.in_(scopes)))
                anchors = {row.scope: row for row in rows}
            for record in page:
                anchor = anchors.get(record.scope)
                if anchor is not None and anchor.seq + 1 == record.seq:
                    yield export_line(dict(zip(_ANCHOR, anchor, strict=True)))
                yield ndjson_line(record)

    async def _pages(self, query: AuditQuery, reader: Reader) -> AsyncIterator[list[StoredRecord]]:
        after = query.after
        while True:
            page = await self._page(query, reader, after, PAGE)
            if page:
                yield page
            if len(page) < PAGE:
                return
            after = page[-1].id

    async def _page(
        self, query: AuditQuery, reader: Reader, after: int | None, limit: int
    ) -> list[StoredRecord]:
        t = audit_records.c
        select = sa.select(*_COLUMNS).where(*_filters(query), *_visible(reader))
        if after is not None:
            select = select.where(t.id > after)
        select = select.order_by(t.id).limit(limit)
        async with self.engine.connect() as db:
            return [StoredRecord(*row) for row in await db.execute(select)]

    async def verify(self, *, allow_unkeyed: bool = False) -> Verified:
        """Check every anchor (its MAC under a known key), then every scope's trail, in
        scope then seq order, a page at a time: seq runs on from the anchor (or 1), `prev` is
        the hash before (the anchor's, or `GENESIS`), and `hash` is the record's under the
        key it names. Returns what was read and the first thing that failed.

        A deleted record shows as the next one's gap, a deleted first one as a trail that
        does not start at its anchor or genesis. The newest records of a scope deleted
        together, or a whole scope, leave no trace here: `AuditHeads.verify` finds them
        against an earlier heads export. What was written before the trail had a key (no
        `key_id`) is broken unless `allow_unkeyed`; then it is counted (`unkeyed`), and
        still broken after a keyed record of its scope."""
        keys = self.keys
        anchors, broken, unkeyed = await self._verify_anchors(keys, allow_unkeyed)
        if broken is not None:
            return Verified(0, broken, anchors, unkeyed)
        t, a = audit_records.c, audit_anchors.c
        anchor = sa.select(*_COLUMNS, a.seq.label("anchor_seq"), a.hash.label("anchor_hash"))
        checked, before = 0, cast(StoredRecord | None, None)
        while True:
            select = anchor.outerjoin(audit_anchors, a.scope == t.scope)
            if before is not None:
                select = select.where(
                    sa.or_(
                        t.scope > before.scope, sa.and_(t.scope == before.scope, t.seq > before.seq)
                    )
                )
            select = select.order_by(t.scope, t.seq).limit(PAGE)
            async with self.engine.connect() as db:
                rows = (await db.execute(select)).all()
            for row in rows:
                record = StoredRecord(*row[: len(_COLUMNS)])
                checked += 1
                tail = _Tail() if row.anchor_seq is None else _Tail(
                    row.anchor_seq, row.anchor_hash, True
                )  # fmt: skip
                same = before if before is not None and before.scope == record.scope else None
                # Within a scope the record before is the tail, unless a prune while this
                # runs moved the anchor past it: the trail then starts at the anchor, as it
                # will for the next verify.
                if same is not None and tail.seq < same.seq:
                    tail = _Tail(same.seq, same.hash, True)
                problem = _problem(record, tail, keys) or _unkeyed(record, same, allow_unkeyed)
                if problem is not None:
                    broken = Broken(record.scope, record.seq, record.key, record.kind, problem)
                    return Verified(checked, broken, anchors, unkeyed)
                unkeyed += record.key_id is None
                before = record
            if len(rows) < PAGE:
                return Verified(checked, None, anchors, unkeyed)

    async def _verify_anchors(
        self, keys: AuditKeys, allow_unkeyed: bool
    ) -> tuple[int, Broken | None, int]:
        """Every anchor's MAC, by scope: how many were read, the first that fails, and how
        many are unkeyed."""
        a = audit_anchors.c
        checked, unkeyed, after = 0, 0, None
        while True:
            select = sa.select(a.scope, a.seq, a.hash, a.key_id, a.mac)
            if after is not None:
                select = select.where(a.scope > after)
            async with self.engine.connect() as db:
                rows = (await db.execute(select.order_by(a.scope).limit(PAGE))).all()
            for row in rows:
                checked += 1
                if row.key_id is None and allow_unkeyed:
                    unkeyed += 1
                elif problem := _anchor_problem(row, keys):
                    return checked, Broken(row.scope, row.seq, None, "anchor", problem), unkeyed
            if len(rows) < PAGE:
                return checked, None, unkeyed
            after = rows[-1].scope

    async def import_records(self, lines: Iterable[Mapping[str, Any]]) -> int:
        """Store an export's lines (`export`, in order) in trails this store does not hold;
        returns how many records were new. All or nothing: one transaction.

        Every line must be keyed under a key of `keys` (its hash, or an anchor's MAC, is
        checked before it is written), and each scope's lines must make its whole trail as
        the export holds it: from seq 1 and `GENESIS`, or from its anchor's line (an export
        of a pruned trail) on, without a gap. A scope this store already holds (a record or
        an anchor) takes no line: an import never adds to a trail a workflow writes here,
        nor takes a key a workflow will use. A line whose key the store holds in the same
        scope with the same hash (an anchor: the same anchor) is skipped, so an import is
        repeatable; otherwise `AuditImportError` names the line. `recordedAt` is kept. No
        readers are imported: an imported trail is for auditors (`AUDITORS`), who read
        everything.
        """
        keys, importing = self.keys, _Import()
        chunk = list[tuple[int, dict[str, Any]]]()
        async with self.engine.begin() as db:
            for number, line in enumerate(lines, 1):
                chunk.append((number, _parsed(number, line, keys)))
                if len(chunk) == PAGE:
                    await importing.chunk(db, chunk)
                    chunk = []
            await importing.chunk(db, chunk)
        return importing.imported

    async def prune(self, before: datetime) -> int:
        """Drop, per scope, the records from its start that were recorded before `before`
        (the store's clock), and move the scope's anchor, signed, to the last one dropped, so
        its trail stays verifiable. A scope whose last record to drop does not verify (its
        `recordedAt` is in its hash: a record made to look old) is left as it is, with a
        warning. A scope left empty keeps its anchor (its next record goes on from there) and
        loses its readers. Returns how many records were dropped."""
        before = _utc(before)
        key = self.keys.current
        t = audit_records.c
        dropped, last = 0, None
        while True:
            # Old records by age: each page is found through the index, and the scopes it
            # names are pruned before the next (a scope seen again is a cheap no-op).
            select = sa.select(t.recorded_at, t.id, t.scope).where(t.recorded_at < before)
            if last is not None:
                select = select.where(
                    sa.or_(
                        t.recorded_at > last[0], sa.and_(t.recorded_at == last[0], t.id > last[1])
                    )
                )
            select = select.order_by(t.recorded_at, t.id).limit(PAGE)
            async with self.engine.connect() as db:
                rows = (await db.execute(select)).all()
            for scope in dict.fromkeys(row.scope for row in rows):
                dropped += await self._prune(scope, before, key)
            if len(rows) < PAGE:
                return dropped
            last = (rows[-1].recorded_at, rows[-1].id)

    async def _prune(self, scope: str, before: datetime, key: AuditKey) -> int:
        t = audit_records.c
        async with self.engine.begin() as db:
            await _lock(db, scope)
            kept = await db.scalar(
                sa.select(sa.func.min(t.seq)).where(t.scope == scope, t.recorded_at >= before)
            )
            last = sa.select(*_COLUMNS).where(t.scope == scope, t.recorded_at < before)
            if kept is not None:
                last = last.where(t.seq < kept)
            row = (await db.execute(last.order_by(t.seq.desc()).limit(1))).first()
            if row is None:
                return 0
            end = StoredRecord(*row)
            # The records before `end` are older than it; its own time is in its hash.
            if end.key_id is not None and (problem := _hash_problem(end, self.keys)):
                log.warning(
                    "audit prune: %s: %s; its scope is not pruned (`ag-ui-temporal audit "
                    "verify` checks the whole trail)",
                    _label(end.scope, end.seq, end.kind, end.key),
                    problem,
                )
                return 0
            deleted = await db.execute(
                sa.delete(audit_records).where(t.scope == scope, t.seq <= end.seq)
            )
            anchor = {"scope": scope, "seq": end.seq, "hash": end.hash, "key_id": key.id,
                      "mac": anchor_mac(key, scope, end.seq, end.hash)}  # fmt: skip
            await db.execute(_upsert_anchor(self.engine), [anchor])
            if kept is None:  # nothing of the scope is left to read, unless an append came
                left = sa.select(t.id).where(t.scope == scope)
                await db.execute(
                    sa.delete(audit_readers).where(audit_readers.c.scope == scope, ~left.exists())
                )
            return int(deleted.rowcount)


class _Import:
    """One `import_records`: the scopes it writes, where each now ends, and its count."""

    def __init__(self) -> None:
        self.started: dict[str, _Tail] = {}
        self.imported = 0

    async def chunk(self, db: AsyncConnection, chunk: list[tuple[int, dict[str, Any]]]) -> None:
        """Check a chunk of parsed lines against the store and what came before, then write
        it (anchors, then records)."""
        if not chunk:
            return
        t, a = audit_records.c, audit_anchors.c
        keys = [line["key"] for _, line in chunk if "key" in line]
        held = await _held(db, keys) if keys else {}
        # What the store holds of the chunk's other scopes: a record, or an anchor (to tell
        # an anchor imported before from another).
        new = {line.get("scope", line.get("anchor")) for _, line in chunk} - self.started.keys()
        holding: dict[str, Any] = {}
        if new:
            with_records = sa.select(t.scope).where(t.scope.in_(new)).distinct()
            holding = dict.fromkeys((await db.execute(with_records)).scalars())
            anchored = sa.select(a.scope, a.seq, a.hash, a.key_id, a.mac).where(a.scope.in_(new))
            holding.update({row[0]: tuple(row[1:]) for row in await db.execute(anchored)})
        anchors, rows = [], []
        for number, line in chunk:
            if "anchor" in line:
                anchors += self._anchor(number, line, holding)
            else:
                rows += self._record(number, line, held, holding)
        if anchors:
            await db.execute(sa.insert(audit_anchors), anchors)
        if rows:
            await db.execute(sa.insert(audit_records), rows)
        self.imported += len(rows)

    def _anchor(
        self, number: int, line: dict[str, Any], holding: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """The anchor's row, if it is to be written: it opens a scope this store lacks."""
        scope = line["anchor"]
        if scope in self.started:
            raise AuditImportError(number, f"{scope}'s anchor after its records")
        if scope in holding:
            if holding[scope] == tuple(line[name] for name in _ANCHOR[1:]):
                return []  # imported before
            raise AuditImportError(number, _held_scope(scope))
        self.started[scope] = _Tail(line["seq"], line["hash"], True)
        return [{"scope": scope, "seq": line["seq"], "hash": line["hash"],
                 "key_id": line["keyId"], "mac": line["mac"]}]  # fmt: skip

    def _record(
        self,
        number: int,
        line: dict[str, Any],
        held: dict[str, tuple[str, str]],
        holding: dict[str, Any],
    ) -> list[dict[str, Any]]:
        """The record's row, if it is to be written: it goes on a trail this import began."""
        scope, seq, label = line["scope"], line["seq"], _label_of(line)
        if (stored := held.get(line["key"])) is not None:
            if stored[0] != scope:
                raise AuditImportError(number, f"{label}: its key is held in {stored[0]}")
            if stored[1] != line["hash"]:
                raise AuditImportError(number, f"{label}: its key is held with another hash")
            return []  # imported before
        if scope not in self.started:
            if scope in holding:
                raise AuditImportError(number, f"{label}: {_held_scope(scope)}")
            self.started[scope] = _Tail()
        tail = self.started[scope]
        if seq != tail.seq + 1:
            if not tail.known:
                raise AuditImportError(
                    number, f"{label}: its scope starts here, past #1, with no anchor line before"
                )
            raise AuditImportError(
                number, f"{label}: does not continue its trail here (at #{tail.seq})"
            )
        if line["prev"] != tail.hash:
            previous = f"#{tail.seq}" if tail.seq else "the genesis"
            raise AuditImportError(number, f"{label}: prev is not the hash of {previous}")
        held[line["key"]] = (scope, line["hash"])
        self.started[scope] = _Tail(seq, line["hash"], True)
        return [_row(line, _instant(line["at"]), _instant(line["recordedAt"]))]


_COLUMNS: Final = [audit_records.c[column] for column in StoredRecord.__dataclass_fields__]


def _filters(query: AuditQuery) -> list[sa.ColumnElement[bool]]:
    t = audit_records.c
    where = []
    if query.scope is not None:
        where.append(t.scope == query.scope)
    if query.thread_id is not None:
        where.append(t.thread_id == query.thread_id)
    if query.chain_id is not None:
        where.append(t.chain_id == query.chain_id)
    if query.principal is not None:
        where.append(t.principal == query.principal)
    if query.since is not None:
        where.append(t.occurred_at >= _utc(query.since))
    return where


def _visible(reader: Reader) -> list[sa.ColumnElement[bool]]:
    """What `reader` may see: nothing is a condition no record meets."""
    if reader.everything:
        return []
    t, r = audit_records.c, audit_readers.c
    # A principal literally named `group:G` is no member of G (as `access.admits` reads it).
    names = [f"{GROUP_PREFIX}{group}" for group in reader.groups]
    if reader.principal and not reader.principal.startswith(GROUP_PREFIX):
        names.append(reader.principal)
    listed = sa.select(r.scope).where(r.principal.in_(names))
    # the chains they read, as ids: each side of the OR then reads an index (scope, chain_id)
    chains = sa.select(sa.func.substr(r.scope, len(CHAIN_SCOPE) + 1)).where(
        r.principal.in_(names), r.scope.startswith(CHAIN_SCOPE, autoescape=True)
    )
    seen = [t.scope.in_(listed), t.chain_id.in_(chains)]
    if reader.chains:
        seen.append(t.chain_id.is_not(None))
    return [sa.or_(*seen)]


async def _lock(db: AsyncConnection, scope: str) -> None:
    """On PostgreSQL, hold `scope`'s lock until the transaction ends: its appends and prunes
    take turns. (Racing inserts of overlapping batches would otherwise wait on each other's
    rows in both unique indexes, a deadlock.) SQLite has one writer at a time anyway."""
    if db.dialect.name == "postgresql":
        key = sa.func.hashtextextended(scope, 0)
        await db.execute(sa.select(sa.func.pg_advisory_xact_lock(key)))


async def _held(db: AsyncConnection, keys: list[str]) -> dict[str, tuple[str, str]]:
    """The scope and hash of each of `keys` the store holds."""
    t = audit_records.c
    query = sa.select(t.key, t.scope, t.hash).where(t.key.in_(keys))
    return {key: (scope, digest) for key, scope, digest in await db.execute(query)}


async def _tail(db: AsyncConnection, scope: str) -> _Tail:
    """Where `scope`'s trail ends in the store: its last record, else its anchor."""
    t, a = audit_records.c, audit_anchors.c
    last = (
        await db.execute(
            sa.select(t.seq, t.hash).where(t.scope == scope).order_by(t.seq.desc()).limit(1)
        )
    ).first()
    if last is None:
        last = (await db.execute(sa.select(a.seq, a.hash).where(a.scope == scope))).first()
    return _Tail() if last is None else _Tail(last.seq, last.hash, True)


def _problem(record: StoredRecord, tail: _Tail, keys: AuditKeys) -> str | None:
    """What is wrong with `record` coming after `tail`, or None."""
    previous = f"#{tail.seq}" if tail.seq else "the genesis"
    if record.seq != tail.seq + 1:
        if record.seq <= tail.seq:
            return f"seq {record.seq} does not follow #{tail.seq}"
        return f"follows {previous}: #{tail.seq + 1}..#{record.seq - 1} are missing"
    if record.prev != tail.hash:
        return f"prev is not the hash of {previous}"
    return _hash_problem(record, keys)


def _hash_problem(record: StoredRecord, keys: AuditKeys) -> str | None:
    """Whether `record`'s hash is its content's, under the key it names (or none)."""
    if record.key_id is None:
        key = None
    elif (key := keys.get(record.key_id)) is None:
        return unknown_key(record.key_id)
    if not hmac.compare_digest(record_hash(record.exported(), key), record.hash):
        return "hash does not match its content"
    return None


def _unkeyed(record: StoredRecord, before: StoredRecord | None, allowed: bool) -> str | None:
    """Whether `record` (a sound one, after `before` in its scope) is broken for being
    written without a key: always after a keyed record, else unless `allowed`."""
    if record.key_id is not None:
        return None
    if before is not None and before.key_id is not None:
        return f"not keyed, though #{before.seq} before it is"
    return None if allowed else NOT_KEYED


def _anchor_problem(anchor: Any, keys: AuditKeys) -> str | None:
    """What is wrong with an anchor (scope, seq, hash, key_id, mac), or None."""
    if anchor.key_id is None:
        return NOT_KEYED
    if (key := keys.get(anchor.key_id)) is None:
        return unknown_key(anchor.key_id)
    message = _anchor_message(key.id, anchor.scope, anchor.seq, anchor.hash)
    if anchor.mac is None or not key.signs(message, anchor.mac):
        return "its MAC is not the one a prune with the audit key made"
    return None


def unknown_key(key_id: object) -> str:
    return f"key {key_id!r}, which is neither AUDIT_KEY nor one of AUDIT_PREVIOUS_KEYS"


def _anchor_message(key_id: str, scope: str, seq: int, hash: str) -> bytes:
    return canonical({"anchor": scope, "seq": seq, "hash": hash, "keyId": key_id})


def _held_scope(scope: str) -> str:
    return f"{scope} is in this store already: an import never adds to a trail it holds"


def _parsed(number: int, line: Mapping[str, Any], keys: AuditKeys) -> dict[str, Any]:
    """An import line as an exported record or anchor (its keys in order), keyed under
    `keys`, or `AuditImportError`."""
    out = _shaped(number, line)
    anchor = "anchor" in out
    label = f"{out['anchor']}'s anchor (at #{out['seq']})" if anchor else _label_of(out)
    if out["keyId"] is None:
        raise AuditImportError(number, f"{label}: not keyed (an import takes keyed lines only)")
    if (key := keys.get(out["keyId"])) is None:
        raise AuditImportError(number, f"{label}: keyed with {unknown_key(out['keyId'])}")
    if anchor:
        message = _anchor_message(key.id, out["anchor"], out["seq"], out["hash"])
        if out["mac"] is None or not key.signs(message, out["mac"]):
            raise AuditImportError(number, f"{label}: its MAC does not match it")
        return out
    try:
        _instant(out["at"])
        recorded = _instant(out["recordedAt"]).isoformat()
    except ValueError:
        raise AuditImportError(number, f"{label}: at or recordedAt is no ISO 8601 time") from None
    if recorded != out["recordedAt"]:  # it is hashed as the store will export it again
        raise AuditImportError(number, f"{label}: recordedAt is not in UTC as exported")
    if not hmac.compare_digest(record_hash(out, key), out["hash"]):
        raise AuditImportError(number, f"{label}: hash does not match its content")
    return out


def _shaped(number: int, line: Mapping[str, Any]) -> dict[str, Any]:
    """An import line's fields, in order, if it has those of a record or an anchor line,
    each of its type; else `AuditImportError`."""
    if not isinstance(line, Mapping):
        raise AuditImportError(number, "not a JSON object")
    anchor = "anchor" in line
    names = list(_ANCHOR) if anchor else [name for name, _ in _EXPORTED] + ["recordedAt"]
    if unknown := sorted(set(line) - set(names)):
        raise AuditImportError(number, f"unknown fields {unknown}")
    if missing := [name for name in names if name not in line]:
        raise AuditImportError(number, f"missing fields {missing}")
    out = {name: line[name] for name in names}
    texts = ["hash"]
    texts += ["anchor"] if anchor else ["scope", "key", "kind", "at", "prev", "recordedAt"]
    optional = ["keyId", "mac"] if anchor else ["threadId", "chainId", "interruptId", "runId",
                                                "principal", "keyId"]  # fmt: skip
    wrong = [name for name in texts if not isinstance(out[name], str)]
    wrong += [name for name in optional if not isinstance(out[name], str | None)]
    if not anchor and not isinstance(out["data"], dict):
        wrong.append("data")
    if not isinstance(out["seq"], int) or isinstance(out["seq"], bool) or out["seq"] < 1:
        wrong.append("seq")
    if wrong:
        raise AuditImportError(number, f"fields of the wrong type: {wrong}")
    return out


def _row(fields: Mapping[str, Any], occurred_at: datetime, recorded_at: datetime) -> dict[str, Any]:
    """An `audit_records` row of an exported record."""
    row = {column: fields[name] for name, column in _EXPORTED}
    return {**row, "occurred_at": occurred_at, "recorded_at": recorded_at}


def _upsert_anchor(engine: AsyncEngine) -> Insert:
    """Set a scope's anchor, or move it forward, in the engine's dialect. Never back: two
    workers pruning at once with clocks apart compute two cuts, and the one that commits last
    may be the earlier."""
    if engine.dialect.name == "sqlite":
        lite = sqlite.insert(audit_anchors)
        return lite.on_conflict_do_update(
            index_elements=["scope"],
            set_={name: lite.excluded[name] for name in ("seq", "hash", "key_id", "mac")},
            where=audit_anchors.c.seq < lite.excluded.seq,
        )
    pg = postgresql.insert(audit_anchors)
    return pg.on_conflict_do_update(
        index_elements=["scope"],
        set_={name: pg.excluded[name] for name in ("seq", "hash", "key_id", "mac")},
        where=audit_anchors.c.seq < pg.excluded.seq,
    )


def _label(scope: str, seq: int, kind: str, key: str) -> str:
    return f"{scope} #{seq} {kind} (key {key})"


def _label_of(line: Mapping[str, Any]) -> str:
    return _label(line["scope"], line["seq"], line["kind"], line["key"])


def _instant(text: str) -> datetime:
    """An ISO 8601 time (a record's `at`, an export's `recordedAt`); UTC if it names no
    offset."""
    return _utc(datetime.fromisoformat(text))


def _utc(moment: datetime) -> datetime:
    """In UTC: SQLite keeps a datetime's wall time without its offset (and reads it naive)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
