"""The audit trail's store (both engines): each record once per key in one hash chain per
scope, also under racing writers; `verify` names the first record changed, removed or
relinked behind its back; an export imports elsewhere byte for byte; a prune keeps the trail
verifiable; reads answer only what their reader may see."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from ag_ui_temporal.settings import sqlite_url
from ag_ui_temporal.store import (
    GENESIS,
    AuditImportError,
    AuditLog,
    AuditQuery,
    Reader,
    StoredRecord,
    ndjson_line,
    open_engine,
    record_hash,
)
from ag_ui_temporal.store import audit as audit_module
from ag_ui_temporal.store.migrate import upgrade
from ag_ui_temporal.store.tables import audit_anchors, audit_readers, audit_records
from ag_ui_temporal.workflows.contract.audit import AuditBatch, AuditRecord
from tests.conftest import new_database
from tests.postgres import Cluster

EVERYTHING = Reader(principal="", everything=True)
EDITED = {"to": "grace@example.com", "subject": "Offer"}


def record(key: str, kind: str = "asked", **fields: Any) -> AuditRecord:
    fields.setdefault("at", "2026-12-01T10:00:00+00:00")
    return AuditRecord(key=key, kind=kind, **fields)


def thread_life(thread: str, n: int = 4) -> list[AuditRecord]:
    """An approval with edits in a thread: asked, delivered, answered, result (and more)."""
    kinds = ["asked", "delivered", "answered", "result"]
    out = []
    for i in range(n):
        data: dict[str, Any] = {"n": i}
        if kinds[i % 4] == "answered":
            data["payload"] = {"approved": True, "editedArgs": dict(EDITED)}
        out.append(
            record(f"{thread}#{i}", kinds[i % 4], thread_id=thread, interrupt_id="int-1",
                   principal="alice", data=data)
        )  # fmt: skip
    return out


def batch(scope: str, records: list[AuditRecord], readers: list[str] | None = None) -> AuditBatch:
    return AuditBatch(scope=scope, readers=readers or [], records=records)


async def everything(log: AuditLog, query: AuditQuery | None = None) -> list[StoredRecord]:
    return [r async for r in log.stream(query or AuditQuery(), EVERYTHING)]


async def export(log: AuditLog) -> bytes:
    return b"".join(ndjson_line(r) for r in await everything(log))


@pytest.fixture
def log(engine: AsyncEngine) -> AuditLog:
    return AuditLog(engine)


@pytest.fixture
def small_pages(monkeypatch: pytest.MonkeyPatch) -> int:
    """Pages of 2 records: every read, verify, import and prune crosses page boundaries."""
    monkeypatch.setattr(audit_module, "PAGE", 2)
    return 2


@pytest.fixture
async def copy(
    store_url: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[AuditLog]:
    """Another new store on the same engine (an auditor's, to import into)."""
    kind = "sqlite" if store_url.startswith("sqlite") else "postgresql"
    url = new_database(request, kind, tmp_path, "copy.sqlite3")
    await upgrade(url)
    engine = open_engine(url)
    yield AuditLog(engine)
    await engine.dispose()


# -- append ------------------------------------------------------------------------------


async def test_a_batch_appends_once_per_key_as_a_hash_chain(log: AuditLog):
    records = thread_life("t-1", 4)
    assert await log.append(batch("thread:t-1", records[:3], ["alice"])) == 3
    # a retried activity, and the next batch repeating a record the first had
    assert await log.append(batch("thread:t-1", records[:3], ["alice"])) == 0
    assert await log.append(batch("thread:t-1", [records[2], records[3], records[3]])) == 1
    stored = await everything(log)
    assert [(r.seq, r.key) for r in stored] == [(i + 1, f"t-1#{i}") for i in range(4)]
    assert stored[0].prev == GENESIS
    for before, after in itertools.pairwise(stored):
        assert after.prev == before.hash
    for r in stored:
        assert r.hash == record_hash(r.exported()) and len(r.hash) == 64
    assert stored[2].data["payload"]["editedArgs"] == EDITED
    assert await log.verify() == (4, None)


async def test_scopes_have_chains_of_their_own(log: AuditLog):
    await log.append(batch("thread:t-1", thread_life("t-1", 2)))
    await log.append(batch("thread:t-2", thread_life("t-2", 3)))
    await log.append(batch("thread:t-1", thread_life("t-1", 3)))
    by_scope: dict[str, list[int]] = {}
    for r in await everything(log):
        by_scope.setdefault(r.scope, []).append(r.seq)
    assert by_scope == {"thread:t-1": [1, 2, 3], "thread:t-2": [1, 2, 3]}
    assert await log.verify() == (6, None)


async def test_racing_writers_of_overlapping_batches_make_one_chain(store_url: str):
    """Four workers (engines of their own) append overlapping batches to one scope at once,
    round after round: every key once, seq 1..n without a gap, one chain."""
    logs = [AuditLog(open_engine(store_url)) for _ in range(4)]
    try:
        keys = 0
        for round_ in range(5):
            records = [record(f"r{round_}-{i}", thread_id="t-race") for i in range(12)]
            batches = [records[w * 3 : w * 3 + 6] for w in range(4)]  # each shares 3 keys
            # Without readers to insert first, SQLite's writers too read the tail at once.
            readers = ["alice"] if round_ % 2 else []
            appends = [
                log.append(batch("thread:t-race", records, readers))
                for log, records in zip(logs, batches, strict=True)
            ]
            appended = await asyncio.gather(*appends)
            assert sum(appended) == 12  # each key once, whoever appended it
            keys += sum(appended)
        stored = await everything(logs[0])
        assert [r.seq for r in stored] == list(range(1, keys + 1))
        assert len({r.key for r in stored}) == keys
        assert await logs[0].verify() == (keys, None)
    finally:
        for log in logs:
            await log.engine.dispose()


# -- verify ------------------------------------------------------------------------------


async def filled(log: AuditLog) -> list[StoredRecord]:
    await log.append(batch("thread:t-1", thread_life("t-1", 6), ["alice"]))
    await log.append(batch("thread:t-2", thread_life("t-2", 2), ["bob"]))
    return await everything(log)


async def test_verify_names_a_record_whose_data_was_changed(
    log: AuditLog, engine: AsyncEngine, small_pages: int
):
    stored = await filled(log)
    assert await log.verify() == (8, None)
    answered = stored[2]
    assert answered.kind == "answered"
    data = {**answered.data, "payload": {"approved": True, "editedArgs": {**EDITED, "to": "m@x"}}}
    async with engine.begin() as db:  # someone with the database's password
        await db.execute(
            sa.update(audit_records).where(audit_records.c.id == answered.id).values(data=data)
        )
    checked, broken = await log.verify()
    assert broken is not None and checked == 3
    assert (broken.scope, broken.seq, broken.key, broken.kind) == ("thread:t-1", 3, "t-1#2",
                                                                   "answered")  # fmt: skip
    assert str(broken) == "thread:t-1 #3 answered (key t-1#2): hash does not match its content"


async def test_verify_names_the_record_after_a_deleted_one(log: AuditLog, engine: AsyncEngine):
    stored = await filled(log)
    async with engine.begin() as db:
        await db.execute(sa.delete(audit_records).where(audit_records.c.id == stored[3].id))
    checked, broken = await log.verify()
    assert broken is not None and (broken.seq, broken.key) == (5, "t-1#4")
    assert "#4..#4 are missing" in broken.problem and checked == 4


async def test_verify_names_a_relinked_record(log: AuditLog, engine: AsyncEngine):
    stored = await filled(log)
    async with engine.begin() as db:
        await db.execute(
            sa.update(audit_records).where(audit_records.c.id == stored[6].id).values(prev="f" * 64)
        )
    _, broken = await log.verify()
    assert broken is not None and (broken.scope, broken.seq) == ("thread:t-2", 1)
    assert broken.problem == "prev is not the hash of the genesis"


async def test_verify_of_an_empty_store(log: AuditLog):
    assert await log.verify() == (0, None)


# -- export and import -------------------------------------------------------------------


async def test_an_export_imports_elsewhere_byte_for_byte(
    log: AuditLog, copy: AuditLog, small_pages: int
):
    await filled(log)
    await log.append(batch("chain:c-1", [record("c-1#0", "submitted", chain_id="c-1",
                                                data={"note": "ünïcode ✓"})]))  # fmt: skip
    exported = await export(log)
    lines = [json.loads(line) for line in exported.splitlines()]
    assert list(lines[0]) == [
        "scope", "seq", "key", "kind", "at", "threadId", "chainId", "interruptId", "runId",
        "principal", "data", "prev", "hash", "recordedAt",
    ]  # fmt: skip
    assert "✓".encode() in exported  # UTF-8, not escaped
    assert await copy.import_records(lines) == len(lines) == 9
    assert await export(copy) == exported
    assert await copy.verify() == (9, None)
    assert await copy.import_records(lines) == 0  # an import is repeatable
    assert await copy.read(AuditQuery(), Reader("alice")) == []  # no readers are imported


async def test_an_import_refuses_a_tampered_line_and_stores_nothing(
    log: AuditLog, copy: AuditLog, small_pages: int
):
    await filled(log)
    lines = [json.loads(line) for line in (await export(log)).splitlines()]

    changed = json.loads(json.dumps(lines))
    changed[2]["data"]["payload"]["editedArgs"]["to"] = "m@x"
    with pytest.raises(AuditImportError) as refused:
        await copy.import_records(changed)
    assert refused.value.line == 3
    assert str(refused.value) == (
        "line 3: thread:t-1 #3 answered (key t-1#2): hash does not match its content"
    )

    # Changed and rehashed, the next line no longer links to it.
    changed[2]["hash"] = record_hash(changed[2])
    with pytest.raises(AuditImportError, match=r"^line 4: thread:t-1 #4 result .*prev"):
        await copy.import_records(changed)

    missing = lines[:3] + lines[4:]
    with pytest.raises(AuditImportError, match=r"^line 4: thread:t-1 #5 .*does not continue"):
        await copy.import_records(missing)

    assert await copy.verify() == (0, None)  # all or nothing: not even the lines before

    with pytest.raises(AuditImportError, match=r"^line 2: unknown fields \['extra'\]"):
        await copy.import_records([lines[0], {**lines[1], "extra": 1}])
    with pytest.raises(AuditImportError, match=r"^line 1: fields of the wrong type: \['seq'\]"):
        await copy.import_records([{**lines[0], "seq": "1"}])
    with pytest.raises(AuditImportError, match=r"^line 1: not a JSON object"):
        await copy.import_records([[1, 2]])  # type: ignore[list-item]

    # A key this store holds with another hash is refused, not skipped.
    await copy.import_records(lines[:3])
    other = {**lines[2], "data": {"n": 99}}
    other["hash"] = record_hash(other)
    with pytest.raises(AuditImportError, match=r"^line 1: .*held with another hash"):
        await copy.import_records([other])


async def test_an_export_of_one_engine_imports_into_the_other(postgres: Cluster, tmp_path: Path):
    urls = [sqlite_url(tmp_path / "a.sqlite3"), postgres.database(), sqlite_url(tmp_path / "b")]
    logs = []
    for url in urls:
        await upgrade(url)
        logs.append(AuditLog(open_engine(url)))
    try:
        await filled(logs[0])
        exported = await export(logs[0])
        lines = [json.loads(line) for line in exported.splitlines()]
        for log in logs[1:]:
            assert await log.import_records(lines) == 8
            assert await export(log) == exported
            lines = [json.loads(line) for line in (await export(log)).splitlines()]
    finally:
        for log in logs:
            await log.engine.dispose()


# -- prune -------------------------------------------------------------------------------


async def test_a_pruned_trail_stays_verifiable_and_goes_on(
    log: AuditLog, engine: AsyncEngine, copy: AuditLog, small_pages: int
):
    life = thread_life("t-1", 8)
    await log.append(batch("thread:t-1", life[:3], ["alice"]))
    await log.append(batch("thread:t-2", thread_life("t-2", 2), ["bob"]))
    cut = datetime.now(UTC)
    await log.append(batch("thread:t-1", life[3:6], ["alice"]))
    before = await everything(log)

    assert await log.prune(cut) == 5  # t-1 #1..#3, all of t-2
    assert await log.prune(cut) == 0
    kept = await everything(log)
    assert [(r.scope, r.seq) for r in kept] == [("thread:t-1", s) for s in (4, 5, 6)]
    assert kept == before[5:]
    assert await log.verify() == (3, None)
    async with engine.connect() as db:
        anchors = {row.scope: (row.seq, row.hash) for row in await db.execute(
            sa.select(audit_anchors))}  # fmt: skip
        readers = {tuple(row) for row in await db.execute(sa.select(audit_readers))}
    assert anchors == {"thread:t-1": (3, before[2].hash), "thread:t-2": (2, before[4].hash)}
    assert readers == {("thread:t-1", "alice")}  # t-2 has nothing left to read

    # Appends go on from the last record, or from the anchor of a scope left empty.
    await log.append(batch("thread:t-1", life[6:], ["alice"]))
    await log.append(batch("thread:t-2", thread_life("t-3", 1), ["bob"]))
    after = await everything(log)
    assert [(r.scope, r.seq) for r in after[3:]] == [
        ("thread:t-1", 7), ("thread:t-1", 8), ("thread:t-2", 3)
    ]  # fmt: skip
    assert after[-1].prev == before[4].hash
    assert await log.verify() == (6, None)
    assert await log.read(AuditQuery(), Reader("bob")) == [after[-1]]

    # An export of the pruned trail starts at its anchor elsewhere too.
    exported = await export(log)
    assert await copy.import_records(json.loads(x) for x in exported.splitlines()) == 6
    assert await copy.verify() == (6, None)
    assert await export(copy) == exported

    # A tampered anchor shows.
    async with engine.begin() as db:
        await db.execute(sa.update(audit_anchors).values(hash="e" * 64))
    _, broken = await log.verify()
    assert broken is not None and (broken.scope, broken.seq) == ("thread:t-1", 4)
    assert broken.problem == "prev is not the hash of #3"


async def test_prune_keeps_records_after_a_newer_one(log: AuditLog, engine: AsyncEngine):
    """Only a scope's prefix goes: an old record after a newer one (another worker's clock,
    an import) stays, so the trail has no hole."""
    await log.append(batch("thread:t-1", thread_life("t-1", 4)))
    stored = await everything(log)
    old, new = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 6, 1, tzinfo=UTC)
    async with engine.begin() as db:
        for r, when in zip(stored, [old, new, old, old], strict=True):
            await db.execute(
                sa.update(audit_records).where(audit_records.c.id == r.id).values(recorded_at=when)
            )
    assert await log.prune(datetime(2026, 3, 1, tzinfo=UTC)) == 1
    assert [r.seq for r in await everything(log)] == [2, 3, 4]
    assert await log.verify() == (3, None)


async def test_an_anchor_only_moves_forward(log: AuditLog, engine: AsyncEngine):
    """Two workers prune at once with clocks apart: the earlier cut, committed last, does
    not move the anchor back before the records left."""
    await log.append(batch("thread:t-1", thread_life("t-1", 4)))
    assert await log.prune(datetime.now(UTC)) == 4
    async with engine.begin() as db:
        upsert = audit_module._upsert_anchor(engine)
        await db.execute(upsert, [{"scope": "thread:t-1", "seq": 2, "hash": "b" * 64}])
        await db.execute(upsert, [{"scope": "thread:t-9", "seq": 2, "hash": "b" * 64}])
        anchors = dict(
            (await db.execute(sa.select(audit_anchors.c.scope, audit_anchors.c.seq))).all()
        )
    assert anchors == {"thread:t-1": 4, "thread:t-9": 2}


async def test_a_prune_during_verify_is_no_break(
    log: AuditLog, engine: AsyncEngine, small_pages: int
):
    """The worker prunes while `audit verify` reads: the trail goes on from the new anchor."""
    await log.append(batch("thread:t-1", thread_life("t-1", 6)))
    old = datetime(2026, 1, 1, tzinfo=UTC)
    async with engine.begin() as db:
        await db.execute(
            sa.update(audit_records).where(audit_records.c.seq <= 3).values(recorded_at=old)
        )

    class PrunedAfterFirstPage:
        """The engine, but the second page is read after a prune dropped #1..#3."""

        def __init__(self) -> None:
            self.pages = 0

        def connect(self) -> Any:
            self.pages += 1
            return self.pruned() if self.pages == 2 else engine.connect()

        @contextlib.asynccontextmanager
        async def pruned(self) -> AsyncIterator[Any]:
            assert await log.prune(datetime(2026, 2, 1, tzinfo=UTC)) == 3
            async with engine.connect() as db:
                yield db

    verifying = AuditLog(cast(AsyncEngine, PrunedAfterFirstPage()))
    assert await verifying.verify() == (2 + 3, None)  # #1, #2, then #4..#6


# -- reads -------------------------------------------------------------------------------


@pytest.fixture
async def trails(log: AuditLog) -> dict[str, StoredRecord]:
    """alice's thread; a chain c-1 (alice asks, bob and finance decide) with bob's seat in his
    inbox; a chain c-2 nobody is listed for. By key."""
    await log.append(batch("thread:t-1", [
        record("t1-asked", thread_id="t-1", principal="alice", at="2026-12-01T09:00:00Z"),
        record("t1-answered", "answered", thread_id="t-1", principal="alice",
               at="2026-12-01T11:30:00+02:00"),  # 09:30 UTC
    ], ["alice"]))  # fmt: skip
    await log.append(batch("chain:c-1", [
        record("c1-submitted", "submitted", chain_id="c-1", principal="alice",
               at="2026-12-01T10:00:00Z"),
        record("c1-decision", "decision", chain_id="c-1", principal="bob",
               at="2026-12-01T12:00:00Z"),
    ], ["alice", "bob", "group:finance"]))  # fmt: skip
    await log.append(batch("thread:inbox:bob", [
        record("b-offered", "offered", thread_id="inbox:bob", chain_id="c-1", principal="bob",
               at="2026-12-01T10:01:00Z"),
        record("b-answered", "answered", thread_id="inbox:bob", chain_id="c-1",
               principal="bob", at="2026-12-01T11:59:00Z"),
    ], ["bob"]))  # fmt: skip
    await log.append(batch("chain:c-2", [
        record("c2-submitted", "submitted", chain_id="c-2", principal="zoe",
               at="2026-12-02T08:00:00Z"),
    ]))  # fmt: skip
    return {r.key: r for r in await everything(log)}


def keys(records: list[StoredRecord]) -> list[str]:
    return [r.key for r in records]


async def test_reads_filter_by_scope_thread_chain_principal_and_time(
    log: AuditLog, trails: dict[str, StoredRecord]
):
    async def read(**query: Any) -> list[str]:
        return keys(await log.read(AuditQuery(**query), EVERYTHING))

    assert await read(thread_id="t-1") == ["t1-asked", "t1-answered"]
    assert await read(chain_id="c-1") == ["c1-submitted", "c1-decision", "b-offered",
                                          "b-answered"]  # fmt: skip
    assert await read(scope="chain:c-1") == ["c1-submitted", "c1-decision"]  # its own only
    assert await read(principal="bob") == ["c1-decision", "b-offered", "b-answered"]
    since = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
    assert await read(since=since, thread_id="t-1") == ["t1-answered"]
    assert await read(since=datetime(2026, 12, 1, 13, 1, tzinfo=UTC).astimezone()) == [
        "c2-submitted"
    ]  # fmt: skip
    assert await read(thread_id="t-9") == []
    with pytest.raises(ValueError):
        await read(limit=0)
    with pytest.raises(ValueError):
        await read(limit=1001)


async def test_pages_follow_the_cursor_and_the_stream_reads_them_all(
    log: AuditLog, trails: dict[str, StoredRecord], small_pages: int
):
    pages, after = [], None
    while page := await log.read(AuditQuery(limit=3, after=after), EVERYTHING):
        pages.append(keys(page))
        after = page[-1].id
    assert [len(p) for p in pages] == [3, 3, 1]
    assert [key for page in pages for key in page] == list(trails)
    assert keys(await everything(log, AuditQuery(limit=1))) == list(trails)  # limit ignored
    first = trails["t1-answered"].id
    assert keys(await everything(log, AuditQuery(after=first)))[0] == "c1-submitted"


@pytest.mark.parametrize(
    ("reader", "sees"),
    [
        (Reader("alice"), ["t1-asked", "t1-answered", "c1-submitted", "c1-decision",
                           "b-offered", "b-answered"]),  # her thread, her chain and its seats
        (Reader("bob"), ["c1-submitted", "c1-decision", "b-offered", "b-answered"]),
        (Reader("frank", groups=["finance"]), ["c1-submitted", "c1-decision", "b-offered",
                                               "b-answered"]),  # via the chain's group
        (Reader("admin", chains=True), ["c1-submitted", "c1-decision", "b-offered",
                                        "b-answered", "c2-submitted"]),
        (Reader("auditor", everything=True), ["t1-asked", "t1-answered", "c1-submitted",
                                              "c1-decision", "b-offered", "b-answered",
                                              "c2-submitted"]),
        (Reader("mallory", groups=["sales"]), []),
        (Reader("group:finance"), []),  # a principal named like a group is in no group
    ],
)  # fmt: skip
async def test_a_reader_sees_what_its_scopes_give_it(
    log: AuditLog, trails: dict[str, StoredRecord], reader: Reader, sees: list[str]
):
    assert keys(await log.read(AuditQuery(), reader)) == sees
    assert keys([r async for r in log.stream(AuditQuery(), reader)]) == sees
    assert keys(await log.read(AuditQuery(thread_id="inbox:bob"), reader)) == [
        k for k in sees if k.startswith("b-")
    ]
