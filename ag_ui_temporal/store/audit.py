"""The audit trail: every record a workflow sends (`workflows.contract.audit`), kept once per
key in a hash chain per scope, after Temporal has deleted the workflows.

A scope (`thread:<id>`, `chain:<id>`) numbers its records 1, 2, ...; each carries the hash
of the one before (`prev`, `GENESIS` for the first) and its own (`record_hash` of its
exported form), so `AuditLog.verify` finds a record changed, removed or relinked by anyone
who went around this module. Reads answer only what a `Reader` may see; `prune` drops the
oldest records and keeps each trail verifiable from its anchor; an export (`ndjson_line`)
imports into another store (`import_records`) exactly as it was.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.sql.dml import Insert

from ag_ui_temporal.store._insert import insert_if_absent
from ag_ui_temporal.store.tables import audit_anchors, audit_readers, audit_records
from ag_ui_temporal.workflows.contract.access import GROUP_PREFIX
from ag_ui_temporal.workflows.contract.audit import CHAIN_SCOPE, AuditBatch, canonical
from ag_ui_temporal.workflows.contract.names import json_line

GENESIS: Final = "0" * 64
"""`prev` of a scope's first record."""
MAX_READ: Final = 1_000
"""The most records one `AuditLog.read` returns."""
PAGE: Final = 500
"""Records per query of `stream`, `verify`, `import_records` and `prune`."""
APPEND_ATTEMPTS: Final = 5
"""How often an append that lost a race (another writer took its seq) is redone."""

_EXPORTED: Final = (
    ("scope", "scope"), ("seq", "seq"), ("key", "key"), ("kind", "kind"), ("at", "at"),
    ("threadId", "thread_id"), ("chainId", "chain_id"), ("interruptId", "interrupt_id"),
    ("runId", "run_id"), ("principal", "principal"), ("data", "data"), ("prev", "prev"),
    ("hash", "hash"),
)  # fmt: skip
"""An exported record's keys, in order (then `recordedAt`), and the columns they come from."""
_UNHASHED: Final = ("hash", "recordedAt")


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
    hash: str
    recorded_at: datetime

    def exported(self) -> dict[str, Any]:
        """NDJSON export / `GET /audit` form, keys in this order: scope, seq, key, kind, at,
        threadId, chainId, interruptId, runId, principal, data, prev, hash, recordedAt
        (ISO 8601). No id."""
        out = {name: getattr(self, column) for name, column in _EXPORTED}
        out["recordedAt"] = _utc(self.recorded_at).isoformat()
        return out


def record_hash(exported: Mapping[str, Any]) -> str:
    """sha256 hex of `canonical` of the exported record without `hash` and `recordedAt`."""
    hashed = {name: value for name, value in exported.items() if name not in _UNHASHED}
    return hashlib.sha256(canonical(hashed)).hexdigest()


def ndjson_line(record: StoredRecord) -> bytes:
    """The record's line in an export (and in `GET /audit`'s NDJSON)."""
    return json_line(record.exported()).encode() + b"\n"


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
    """The first record `verify` found that does not match its trail."""

    scope: str
    seq: int
    key: str
    kind: str
    problem: str

    def __str__(self) -> str:
        return f"{_label(self.scope, self.seq, self.kind, self.key)}: {self.problem}"


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
    """The `audit_records`, `audit_readers` and `audit_anchors` tables."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def append(self, batch: AuditBatch) -> int:
        """Append the batch's records to its scope's trail, in order, each once per key (a
        key the store holds is skipped), and add its readers; returns how many were new.

        One transaction. Two writers of one scope (two workers, a zombie activity attempt)
        take turns: on PostgreSQL the scope's lock orders them; on SQLite the second may read
        the tail the first is extending, then hits UNIQUE(key) or UNIQUE(scope, seq), rolls
        back and redoes the whole batch on the new tail.
        """
        for attempt in range(APPEND_ATTEMPTS):
            try:
                async with self.engine.begin() as db:
                    return await self._append(db, batch)
            except IntegrityError:
                if attempt == APPEND_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    async def _append(self, db: AsyncConnection, batch: AuditBatch) -> int:
        await _lock(db, batch.scope)
        # Readers first: on SQLite this write takes the database's lock before the tail is read.
        readers = [{"scope": batch.scope, "principal": p} for p in sorted(set(batch.readers))]
        if readers:
            await db.execute(insert_if_absent(self.engine, audit_readers), readers)
        keys = [record.key for record in batch.records]
        held = set(await self._held(db, keys)) if keys else set()
        tail = await _tail(db, batch.scope)
        now, rows = datetime.now(UTC), []
        for record in batch.records:
            if record.key in held:
                continue
            held.add(record.key)
            fields = {
                "scope": batch.scope, "seq": tail.seq + 1, "key": record.key,
                "kind": record.kind, "at": record.at, "threadId": record.thread_id,
                "chainId": record.chain_id, "interruptId": record.interrupt_id,
                "runId": record.run_id, "principal": record.principal,
                # as JSON reads it back: what is hashed is what verify will read
                "data": json.loads(canonical(record.data)), "prev": tail.hash,
            }  # fmt: skip
            fields["hash"] = record_hash(fields)
            rows.append(_row(fields, _instant(record.at), now))
            tail.seq, tail.hash = fields["seq"], fields["hash"]
        if rows:
            await db.execute(sa.insert(audit_records), rows)
        return len(rows)

    async def _held(self, db: AsyncConnection, keys: list[str]) -> dict[str, str]:
        """The hash of each of `keys` the store holds."""
        query = sa.select(audit_records.c.key, audit_records.c.hash).where(
            audit_records.c.key.in_(keys)
        )
        return {key: digest for key, digest in await db.execute(query)}

    async def read(self, query: AuditQuery, reader: Reader) -> list[StoredRecord]:
        """One page of what `reader` may see of `query`, by id (at most `query.limit`)."""
        if not 1 <= query.limit <= MAX_READ:
            raise ValueError(f"an audit read returns 1..{MAX_READ} records, not {query.limit}")
        return await self._page(query, reader, query.after, query.limit)

    async def stream(self, query: AuditQuery, reader: Reader) -> AsyncIterator[StoredRecord]:
        """Every record `reader` may see of `query`, by id, read a page at a time (each page
        on a connection of its own, so a slow consumer holds none); `limit` is ignored."""
        after = query.after
        while True:
            page = await self._page(query, reader, after, PAGE)
            for record in page:
                yield record
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

    async def verify(self) -> tuple[int, Broken | None]:
        """Check every scope's trail, in scope then seq order, a page at a time: seq runs on
        from the anchor (or 1), `prev` is the hash before (the anchor's, or `GENESIS`), and
        `hash` matches the record. Returns how many records were checked and the first that
        failed (None: the trail holds). A deleted record shows as the next one's gap; the
        newest records of a scope removed together leave no trace in the chain (an export
        kept elsewhere does)."""
        t, a = audit_records.c, audit_anchors.c
        anchor = sa.select(*_COLUMNS, a.seq.label("anchor_seq"), a.hash.label("anchor_hash"))
        checked, before = 0, None
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
                # Within a scope the record before is the tail, unless a prune while this
                # runs moved the anchor past it: the trail then starts at the anchor, as it
                # will for the next verify.
                if before is not None and before.scope == record.scope and tail.seq < before.seq:
                    tail = _Tail(before.seq, before.hash, True)
                if problem := _problem(record, tail):
                    return checked, Broken(
                        record.scope, record.seq, record.key, record.kind, problem
                    )
                before = record
            if len(rows) < PAGE:
                return checked, None

    async def import_records(self, records: Iterable[Mapping[str, Any]]) -> int:
        """Store exported records (an `audit export`'s lines, in order); returns how many
        were new. All or nothing: one transaction.

        Each must continue its scope's trail in this store (seq and `prev` after its last
        record or anchor; a scope the store does not know starts at the line's seq, with
        an anchor when that is past 1, as an export of a pruned trail does) and its hash
        must match it, else `AuditImportError` names the line. A key already held with the
        same hash is skipped (an import is repeatable); with another, refused. `recordedAt`
        is kept. No readers are imported: an imported trail is for auditors (`AUDITORS`),
        who read everything.
        """
        imported, chunk = 0, list[tuple[int, dict[str, Any]]]()
        async with self.engine.begin() as db:
            for number, line in enumerate(records, 1):
                chunk.append((number, _parsed(number, line)))
                if len(chunk) == PAGE:
                    imported += await self._import(db, chunk)
                    chunk = []
            imported += await self._import(db, chunk)
        return imported

    async def _import(self, db: AsyncConnection, chunk: list[tuple[int, dict[str, Any]]]) -> int:
        if not chunk:
            return 0
        held = await self._held(db, [line["key"] for _, line in chunk])
        tails: dict[str, _Tail] = {}
        rows = []
        for number, line in chunk:
            scope, seq, label = line["scope"], line["seq"], _label_of(line)
            if (stored := held.get(line["key"])) is not None:
                if stored != line["hash"]:
                    raise AuditImportError(number, f"{label}: its key is held with another hash")
                continue
            if scope not in tails:
                tails[scope] = await _tail(db, scope)
            tail = tails[scope]
            if not tail.known and seq > 1:
                # a pruned trail's export starts past 1: its first line's prev is the anchor
                await db.execute(_upsert_anchor(self.engine), [
                    {"scope": scope, "seq": seq - 1, "hash": line["prev"]}
                ])  # fmt: skip
                tail = _Tail(seq - 1, line["prev"], True)
            if seq != tail.seq + 1:
                raise AuditImportError(
                    number, f"{label}: does not continue its trail here (at #{tail.seq})"
                )
            if line["prev"] != tail.hash:
                raise AuditImportError(number, f"{label}: prev is not the hash of #{tail.seq}")
            rows.append(_row(line, _instant(line["at"]), _instant(line["recordedAt"])))
            held[line["key"]] = line["hash"]
            tails[scope] = _Tail(seq, line["hash"], True)
        if rows:
            await db.execute(sa.insert(audit_records), rows)
        return len(rows)

    async def prune(self, before: datetime) -> int:
        """Drop, per scope, the records from its start that were recorded before `before`
        (the store's clock), and move the scope's anchor to the last one dropped, so its
        trail stays verifiable. A scope left empty keeps its anchor (its next record goes
        on from there) and loses its readers. Returns how many records were dropped."""
        before = _utc(before)
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
                dropped += await self._prune(scope, before)
            if len(rows) < PAGE:
                return dropped
            last = (rows[-1].recorded_at, rows[-1].id)

    async def _prune(self, scope: str, before: datetime) -> int:
        t = audit_records.c
        async with self.engine.begin() as db:
            await _lock(db, scope)
            kept = await db.scalar(
                sa.select(sa.func.min(t.seq)).where(t.scope == scope, t.recorded_at >= before)
            )
            last = sa.select(t.seq, t.hash).where(t.scope == scope, t.recorded_at < before)
            if kept is not None:
                last = last.where(t.seq < kept)
            end = (await db.execute(last.order_by(t.seq.desc()).limit(1))).first()
            if end is None:
                return 0
            deleted = await db.execute(
                sa.delete(audit_records).where(t.scope == scope, t.seq <= end.seq)
            )
            await db.execute(
                _upsert_anchor(self.engine), [{"scope": scope, "seq": end.seq, "hash": end.hash}]
            )
            if kept is None:  # nothing of the scope is left to read, unless an append came
                left = sa.select(t.id).where(t.scope == scope)
                await db.execute(
                    sa.delete(audit_readers).where(audit_readers.c.scope == scope, ~left.exists())
                )
            return int(deleted.rowcount)


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


def _problem(record: StoredRecord, tail: _Tail) -> str | None:
    """What is wrong with `record` coming after `tail`, or None."""
    previous = f"#{tail.seq}" if tail.seq else "the genesis"
    if record.seq != tail.seq + 1:
        if record.seq <= tail.seq:
            return f"seq {record.seq} does not follow #{tail.seq}"
        return f"follows {previous}: #{tail.seq + 1}..#{record.seq - 1} are missing"
    if record.prev != tail.hash:
        return f"prev is not the hash of {previous}"
    if record_hash(record.exported()) != record.hash:
        return "hash does not match its content"
    return None


def _parsed(number: int, line: Mapping[str, Any]) -> dict[str, Any]:
    """An import line as an exported record (its keys in order), or `AuditImportError`."""
    if not isinstance(line, Mapping):
        raise AuditImportError(number, "not a JSON object")
    names = [name for name, _ in _EXPORTED] + ["recordedAt"]
    if unknown := sorted(set(line) - set(names)):
        raise AuditImportError(number, f"unknown fields {unknown}")
    if missing := [name for name in names if name not in line]:
        raise AuditImportError(number, f"missing fields {missing}")
    out = {name: line[name] for name in names}
    texts = ("scope", "key", "kind", "at", "prev", "hash", "recordedAt")
    optional = ("threadId", "chainId", "interruptId", "runId", "principal")
    wrong = [name for name in texts if not isinstance(out[name], str)]
    wrong += [name for name in optional if not isinstance(out[name], str | None)]
    if not isinstance(out["data"], dict):
        wrong.append("data")
    if not isinstance(out["seq"], int) or isinstance(out["seq"], bool) or out["seq"] < 1:
        wrong.append("seq")
    if wrong:
        raise AuditImportError(number, f"fields of the wrong type: {wrong}")
    label = _label_of(out)
    try:
        _instant(out["at"]), _instant(out["recordedAt"])
    except ValueError:
        raise AuditImportError(number, f"{label}: at or recordedAt is no ISO 8601 time") from None
    if record_hash(out) != out["hash"]:
        raise AuditImportError(number, f"{label}: hash does not match its content")
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
            set_={"seq": lite.excluded.seq, "hash": lite.excluded.hash},
            where=audit_anchors.c.seq < lite.excluded.seq,
        )
    pg = postgresql.insert(audit_anchors)
    return pg.on_conflict_do_update(
        index_elements=["scope"],
        set_={"seq": pg.excluded.seq, "hash": pg.excluded.hash},
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
