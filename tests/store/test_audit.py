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
    AuditHeads,
    AuditImportError,
    AuditKey,
    AuditKeys,
    AuditLog,
    AuditQuery,
    Broken,
    HeadsError,
    Reader,
    StoredRecord,
    open_engine,
    record_hash,
)
from ag_ui_temporal.store import audit as audit_module
from ag_ui_temporal.store.migrate import upgrade
from ag_ui_temporal.store.tables import audit_anchors, audit_readers, audit_records
from ag_ui_temporal.workflows.contract.audit import AuditBatch, AuditRecord
from tests.audit_trails import AUDIT_KEYS, TEST_AUDIT_KEY, trail_lines
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
    """`audit export`'s bytes: every record, and the anchor each pruned trail starts at."""
    return b"".join([line async for line in log.export(AuditQuery())])


async def verified(log: AuditLog) -> tuple[int, Broken | None]:
    """How many records `verify` read, and what it found broken."""
    checked, broken, _, _ = await log.verify()
    return checked, broken


def rehash(exported: dict[str, Any]) -> str:
    """A record's hash under the tests' key: what only someone holding it can make."""
    return record_hash(exported, AUDIT_KEYS.current)


@pytest.fixture
def log(engine: AsyncEngine) -> AuditLog:
    return AuditLog(engine, AUDIT_KEYS)


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
    yield AuditLog(engine, AUDIT_KEYS)
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
        assert r.hash == rehash(r.exported()) and len(r.hash) == 64
        assert r.key_id == AUDIT_KEYS.current.id
    assert stored[2].data["payload"]["editedArgs"] == EDITED
    assert await verified(log) == (4, None)


async def test_scopes_have_chains_of_their_own(log: AuditLog):
    await log.append(batch("thread:t-1", thread_life("t-1", 2)))
    await log.append(batch("thread:t-2", thread_life("t-2", 3)))
    await log.append(batch("thread:t-1", thread_life("t-1", 3)))
    by_scope: dict[str, list[int]] = {}
    for r in await everything(log):
        by_scope.setdefault(r.scope, []).append(r.seq)
    assert by_scope == {"thread:t-1": [1, 2, 3], "thread:t-2": [1, 2, 3]}
    assert await verified(log) == (6, None)


async def test_racing_writers_of_overlapping_batches_make_one_chain(store_url: str):
    """Four workers (engines of their own) append overlapping batches to one scope at once,
    round after round: every key once, seq 1..n without a gap, one chain."""
    logs = [AuditLog(open_engine(store_url), AUDIT_KEYS) for _ in range(4)]
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
        assert await verified(logs[0]) == (keys, None)
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
    assert await verified(log) == (8, None)
    answered = stored[2]
    assert answered.kind == "answered"
    data = {**answered.data, "payload": {"approved": True, "editedArgs": {**EDITED, "to": "m@x"}}}
    async with engine.begin() as db:  # someone with the database's password
        await db.execute(
            sa.update(audit_records).where(audit_records.c.id == answered.id).values(data=data)
        )
    checked, broken = await verified(log)
    assert broken is not None and checked == 3
    assert (broken.scope, broken.seq, broken.key, broken.kind) == ("thread:t-1", 3, "t-1#2",
                                                                   "answered")  # fmt: skip
    assert str(broken) == "thread:t-1 #3 answered (key t-1#2): hash does not match its content"


async def test_verify_names_the_record_after_a_deleted_one(log: AuditLog, engine: AsyncEngine):
    stored = await filled(log)
    async with engine.begin() as db:
        await db.execute(sa.delete(audit_records).where(audit_records.c.id == stored[3].id))
    checked, broken = await verified(log)
    assert broken is not None and (broken.seq, broken.key) == (5, "t-1#4")
    assert "#4..#4 are missing" in broken.problem and checked == 4


async def test_verify_names_a_relinked_record(log: AuditLog, engine: AsyncEngine):
    stored = await filled(log)
    async with engine.begin() as db:
        await db.execute(
            sa.update(audit_records).where(audit_records.c.id == stored[6].id).values(prev="f" * 64)
        )
    _, broken = await verified(log)
    assert broken is not None and (broken.scope, broken.seq) == ("thread:t-2", 1)
    assert broken.problem == "prev is not the hash of the genesis"


async def test_verify_of_an_empty_store(log: AuditLog):
    assert await verified(log) == (0, None)


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
        "principal", "data", "prev", "keyId", "hash", "recordedAt",
    ]  # fmt: skip
    assert "✓".encode() in exported  # UTF-8, not escaped
    assert await copy.import_records(lines) == len(lines) == 9
    assert await export(copy) == exported
    assert await verified(copy) == (9, None)
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
    changed[2]["hash"] = rehash(changed[2])
    with pytest.raises(AuditImportError, match=r"^line 4: thread:t-1 #4 result .*prev"):
        await copy.import_records(changed)

    missing = lines[:3] + lines[4:]
    with pytest.raises(AuditImportError, match=r"^line 4: thread:t-1 #5 .*does not continue"):
        await copy.import_records(missing)

    assert await verified(copy) == (0, None)  # all or nothing: not even the lines before

    with pytest.raises(AuditImportError, match=r"^line 2: unknown fields \['extra'\]"):
        await copy.import_records([lines[0], {**lines[1], "extra": 1}])
    with pytest.raises(AuditImportError, match=r"^line 1: fields of the wrong type: \['seq'\]"):
        await copy.import_records([{**lines[0], "seq": "1"}])
    with pytest.raises(AuditImportError, match=r"^line 1: not a JSON object"):
        await copy.import_records([[1, 2]])  # type: ignore[list-item]

    # A key this store holds with another hash is refused, not skipped.
    await copy.import_records(lines[:3])
    other = {**lines[2], "data": {"n": 99}}
    other["hash"] = rehash(other)
    with pytest.raises(AuditImportError, match=r"^line 1: .*held with another hash"):
        await copy.import_records([other])


async def test_an_export_of_one_engine_imports_into_the_other(postgres: Cluster, tmp_path: Path):
    urls = [sqlite_url(tmp_path / "a.sqlite3"), postgres.database(), sqlite_url(tmp_path / "b")]
    logs = []
    for url in urls:
        await upgrade(url)
        logs.append(AuditLog(open_engine(url), AUDIT_KEYS))
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
    assert await verified(log) == (3, None)
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
    assert await verified(log) == (6, None)
    assert await log.read(AuditQuery(), Reader("bob")) == [after[-1]]

    # An export of the pruned trail starts at its anchor elsewhere too.
    exported = await export(log)
    assert await copy.import_records(json.loads(x) for x in exported.splitlines()) == 6
    assert await verified(copy) == (6, None)
    assert await export(copy) == exported

    # A tampered anchor shows.
    async with engine.begin() as db:
        await db.execute(sa.update(audit_anchors).values(hash="e" * 64))
    _, broken = await verified(log)
    assert broken is not None and (broken.scope, broken.seq, broken.key) == ("thread:t-1", 3, None)
    assert str(broken) == (
        "thread:t-1's anchor (at #3): its MAC is not the one a prune with the audit key made"
    )


async def test_prune_keeps_records_after_a_newer_one(log: AuditLog):
    """Only a scope's prefix goes: an old record after a newer one (another worker's clock,
    an import) stays, so the trail has no hole."""
    old, new = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 6, 1, tzinfo=UTC)
    assert await log.import_records(trail_lines("thread:t-1", [old, new, old, old])) == 4
    assert await log.prune(datetime(2026, 3, 1, tzinfo=UTC)) == 1
    assert [r.seq for r in await everything(log)] == [2, 3, 4]
    assert await verified(log) == (3, None)


async def test_a_record_made_to_look_old_is_not_pruned(
    log: AuditLog, engine: AsyncEngine, caplog: pytest.LogCaptureFixture
):
    """Whoever holds the database cannot have the worker drop records (and sign an anchor
    after them) by backdating them: `recordedAt` is in a record's hash, so the prune finds
    the last one it would drop does not verify, leaves the scope whole and says so."""
    await log.append(batch("thread:t-1", thread_life("t-1", 4)))
    await log.append(batch("thread:t-2", thread_life("t-2", 2)))
    async with engine.begin() as db:
        await db.execute(
            sa.update(audit_records)
            .where(audit_records.c.scope == "thread:t-1", audit_records.c.seq <= 3)
            .values(recorded_at=datetime(2026, 1, 1, tzinfo=UTC))
        )
    assert await log.prune(datetime(2026, 3, 1, tzinfo=UTC)) == 0
    assert len(await everything(log)) == 6
    assert "audit prune: thread:t-1 #3 answered (key t-1#2): hash does not match" in caplog.text
    # A cut past t-1's genuine #4 drops #1..#4: what comes before an old record is old.
    assert await log.prune(datetime.now(UTC)) == 6
    assert await verified(log) == (0, None)


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
    old, new = datetime(2026, 1, 1, tzinfo=UTC), datetime.now(UTC)
    assert await log.import_records(trail_lines("thread:t-1", [old] * 3 + [new] * 3)) == 6

    class PrunedAfterFirstPage:
        """The engine, but the second page is read after a prune dropped #1..#3."""

        def __init__(self) -> None:
            self.pages = 0

        def connect(self) -> Any:
            self.pages += 1  # the anchors' page, then the records' pages
            return self.pruned() if self.pages == 3 else engine.connect()

        @contextlib.asynccontextmanager
        async def pruned(self) -> AsyncIterator[Any]:
            assert await log.prune(datetime(2026, 2, 1, tzinfo=UTC)) == 3
            async with engine.connect() as db:
                yield db

    verifying = AuditLog(cast(AsyncEngine, PrunedAfterFirstPage()), AUDIT_KEYS)
    assert await verified(verifying) == (2 + 3, None)  # #1, #2, then #4..#6


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


# -- tampering by whoever holds the database, but not the key ---------------------------

ROGUE = AuditKey.of("a key of someone who holds only the database")


@pytest.mark.parametrize(
    ("forger", "problem"),
    [
        ("sha256", "hash does not match its content"),  # the unkeyed rule, the key's id kept
        ("unkeyed", "not keyed, though #2 before it is"),  # posing as a record from before keys
        ("rogue", f"key '{ROGUE.id}', which is neither AUDIT_KEY nor one of AUDIT_PREVIOUS_KEYS"),
    ],
)
async def test_a_rewritten_record_shows_though_every_later_hash_was_recomputed(
    log: AuditLog, engine: AsyncEngine, small_pages: int, forger: str, problem: str
):
    """The red team's rewrite: #3's payload changed, #3..#6 rehashed and relinked so that the
    chain is whole again. Without the key no hash they can make is the record's."""
    stored = await filled(log)
    prev = stored[1].hash
    async with engine.begin() as db:
        for r in stored[2:6]:
            exported = {**r.exported(), "prev": prev}
            if r.seq == 3:
                exported["data"] = {"payload": {"approved": True, "editedArgs": {"to": "m@x"}}}
            if forger == "sha256":
                exported["hash"] = record_hash(exported, None)
            else:
                exported["keyId"] = None if forger == "unkeyed" else ROGUE.id
                exported["hash"] = record_hash(exported, None if forger == "unkeyed" else ROGUE)
            prev = exported["hash"]
            await db.execute(
                sa.update(audit_records)
                .where(audit_records.c.id == r.id)
                .values(data=exported["data"], prev=exported["prev"], key_id=exported["keyId"],
                        hash=exported["hash"])
            )  # fmt: skip
    checked, broken = await verified(log)
    assert broken is not None and (broken.scope, broken.seq, broken.kind) == (
        "thread:t-1", 3, "answered"
    )  # fmt: skip
    assert broken.problem == problem and checked == 3


async def test_a_scope_made_up_unkeyed_is_broken_unless_records_before_keys_are_allowed(
    log: AuditLog, engine: AsyncEngine
):
    """Records without a key are what a store kept before it had one, or what anyone with
    the database can write: broken, unless `allow_unkeyed` (a store from before keys),
    which counts them."""
    await filled(log)
    lines = trail_lines("thread:t-9", [datetime.now(UTC)] * 2, audit_key=None)
    async with engine.begin() as db:
        await db.execute(
            sa.insert(audit_records),
            [audit_module._row(line, datetime.now(UTC), datetime.now(UTC)) for line in lines],
        )
    _, broken = await verified(log)
    assert broken is not None and (broken.scope, broken.seq) == ("thread:t-9", 1)
    assert broken.problem == audit_module.NOT_KEYED
    assert await log.verify(allow_unkeyed=True) == (10, None, 0, 2)


@pytest.mark.parametrize("mac", ["none", "rogue", "another scope's"])
async def test_first_records_deleted_behind_a_made_up_anchor_show(
    log: AuditLog, engine: AsyncEngine, mac: str
):
    """#1..#3 deleted and an anchor put where a prune would have left it: no prune signed it
    (and a real anchor's MAC names its own scope)."""
    stored = await filled(log)
    old = datetime(2026, 1, 1, tzinfo=UTC)
    assert await log.import_records(trail_lines("thread:t-3", [old, old])) == 2
    assert await log.prune(datetime(2026, 3, 1, tzinfo=UTC)) == 2  # a real anchor: t-3's
    async with engine.connect() as db:
        real = (await db.execute(sa.select(audit_anchors.c.key_id, audit_anchors.c.mac))).one()
    forged = {
        "none": (None, None),
        "rogue": (ROGUE.id, audit_module.anchor_mac(ROGUE, "thread:t-1", 3, stored[2].hash)),
        "another scope's": tuple(real),
    }[mac]
    async with engine.begin() as db:
        await db.execute(
            sa.delete(audit_records).where(
                audit_records.c.scope == "thread:t-1", audit_records.c.seq <= 3
            )
        )
        await db.execute(
            sa.insert(audit_anchors).values(scope="thread:t-1", seq=3, hash=stored[2].hash,
                                            key_id=forged[0], mac=forged[1])
        )  # fmt: skip
    _, broken = await verified(log)
    assert broken is not None and (broken.scope, broken.seq, broken.key) == ("thread:t-1", 3, None)
    assert (
        broken.problem
        == {
            "none": audit_module.NOT_KEYED,
            "rogue": f"key '{ROGUE.id}', which is neither AUDIT_KEY nor one of AUDIT_PREVIOUS_KEYS",
            "another scope's": "its MAC is not the one a prune with the audit key made",
        }[mac]
    )


async def heads_of(log: AuditLog) -> list[bytes]:
    return [line async for line in AuditHeads(log.engine, AUDIT_KEYS).write()]


async def test_heads_export_each_scope_end_signed(log: AuditLog, small_pages: int):
    await filled(log)
    old = datetime(2026, 1, 1, tzinfo=UTC)
    assert await log.import_records(trail_lines("thread:t-3", [old, old])) == 2
    assert await log.prune(datetime(2026, 3, 1, tzinfo=UTC)) == 2  # t-3: its anchor only
    stored = {r.scope: r for r in await everything(log)}  # each scope's last
    lines = await heads_of(log)
    heads = [json.loads(line) for line in lines]
    assert heads[:-1] == [
        {"scope": "thread:t-1", "seq": 6, "hash": stored["thread:t-1"].hash},
        {"scope": "thread:t-2", "seq": 2, "hash": stored["thread:t-2"].hash},
        {"scope": "thread:t-3", "seq": 2, "hash": trail_lines("thread:t-3", [old, old])[1]["hash"]},
    ]  # fmt: skip
    signature = heads[-1]
    assert list(signature) == ["heads", "takenAt", "keyId", "mac"]
    assert signature["heads"] == 3 and signature["keyId"] == AUDIT_KEYS.current.id
    checking = AuditHeads(log.engine, AUDIT_KEYS)
    assert await checking.verify(lines) == (3, None)

    # The trail goes on, and a prune passes a head: nothing is lost.
    await log.append(batch("thread:t-1", thread_life("t-1", 8)))
    assert await log.prune(datetime.now(UTC)) == 10
    assert await checking.verify(lines) == (3, None)


@pytest.mark.parametrize(
    ("deleted", "lost"),
    [
        ("the last record", "thread:t-1 ends at #5, its head at #6: #6 was deleted"),
        ("the last two", "thread:t-1 ends at #4, its head at #6: #5..#6 were deleted"),
        ("a whole scope", "thread:t-2 is gone: its head is #2, the store holds nothing of it"),
        ("an empty scope's anchor",
         "thread:t-3 is gone: its head is #2, the store holds nothing of it"),
        ("a record redone", "thread:t-1 #6 is not the record the heads name"),
    ],
)  # fmt: skip
async def test_heads_find_the_newest_records_or_a_whole_scope_deleted(
    log: AuditLog, engine: AsyncEngine, deleted: str, lost: str
):
    """What a hash chain cannot show, a heads export taken before does. `verify` alone
    passes each of these (a chain without its end is a shorter chain)."""
    stored = await filled(log)
    old = datetime(2026, 1, 1, tzinfo=UTC)
    assert await log.import_records(trail_lines("thread:t-3", [old, old])) == 2
    assert await log.prune(datetime(2026, 3, 1, tzinfo=UTC)) == 2
    lines = await heads_of(log)
    t, a = audit_records.c, audit_anchors.c
    async with engine.begin() as db:
        if deleted == "the last record":
            await db.execute(sa.delete(audit_records).where(t.id == stored[5].id))
        elif deleted == "the last two":
            await db.execute(sa.delete(audit_records).where(t.id.in_([stored[4].id, stored[5].id])))
        elif deleted == "a whole scope":
            await db.execute(sa.delete(audit_records).where(t.scope == "thread:t-2"))
        elif deleted == "an empty scope's anchor":
            await db.execute(sa.delete(audit_anchors).where(a.scope == "thread:t-3"))
        else:  # the last record deleted, and one in its place the workflows appended since
            await db.execute(sa.delete(audit_records).where(t.id == stored[5].id))
    if deleted == "a record redone":
        await log.append(batch("thread:t-1", [record("t-1#other", thread_id="t-1")]))
    assert (await verified(log))[1] is None
    count, found = await AuditHeads(engine, AUDIT_KEYS).verify(lines)
    assert count == 3 and found is not None
    assert found.startswith(f"{lost} (the heads taken at 20"), found


async def test_a_heads_export_changed_or_not_ours_is_refused(log: AuditLog, small_pages: int):
    await filled(log)
    await log.append(batch("thread:t-3", thread_life("t-3", 1)))
    lines = await heads_of(log)
    checking = AuditHeads(log.engine, AUDIT_KEYS)
    wrong = {
        "a head dropped": lines[1:],
        "a head lowered": [lines[0].replace(b'"seq":6', b'"seq":5'), *lines[1:]],
        "no signature": lines[:-1],
        "another key": [line async for line in AuditHeads(log.engine, AuditKeys(ROGUE)).write()],
        "not a head": [b'{"scope":"thread:t-1"}\n', *lines],
    }
    said = {}
    for what, changed in wrong.items():
        with pytest.raises(HeadsError) as refused:
            await checking.verify(changed)
        said[what] = str(refused.value)
    assert said == {
        "a head dropped": "its signature does not match it: changed since it was taken",
        "a head lowered": "its signature does not match it: changed since it was taken",
        "no signature": "no signature line: not a whole heads export",
        "another key": (
            f"signed with key '{ROGUE.id}', which is neither AUDIT_KEY nor one of "
            "AUDIT_PREVIOUS_KEYS"
        ),
        "not a head": "line 1: not a head (scope, seq, hash)",
    }


# -- imports that would write what the workflows did not --------------------------------


@pytest.mark.parametrize(
    ("forger", "problem"),
    [
        (None, "not keyed (an import takes keyed lines only)"),
        (ROGUE, f"keyed with key '{ROGUE.id}', which is neither AUDIT_KEY nor one of "
                "AUDIT_PREVIOUS_KEYS"),
        ("claimed", "hash does not match its content"),  # our key's id, their hash
    ],
)  # fmt: skip
async def test_an_import_of_a_made_up_scope_is_refused(
    log: AuditLog, forger: AuditKey | str | None, problem: str
):
    await filled(log)
    before = await export(log)
    if forger == "claimed":
        lines = trail_lines("thread:t-9", [datetime.now(UTC)] * 2, audit_key=ROGUE)
        for line in lines:
            line["keyId"] = AUDIT_KEYS.current.id
    else:
        assert not isinstance(forger, str)
        lines = trail_lines("thread:t-9", [datetime.now(UTC)] * 2, audit_key=forger)
    with pytest.raises(AuditImportError) as refused:
        await log.import_records(lines)
    assert str(refused.value) == f"line 1: thread:t-9 #1 asked (key thread:t-9#1): {problem}"
    assert await export(log) == before


async def test_an_import_never_adds_to_a_trail_the_store_holds(
    log: AuditLog, copy: AuditLog, small_pages: int
):
    """Not even a record its own key made (another store's, an export of this one): the
    scope is written by this store's workflows, whose keys an import must not take."""
    await filled(log)
    assert await copy.import_records(json.loads(x) for x in (await export(log)).splitlines()) == 8
    await log.append(batch("thread:t-1", thread_life("t-1", 7)))  # t-1 #7, in `log` only
    lines = [json.loads(x) for x in (await export(log)).splitlines()]
    before = await export(copy)
    with pytest.raises(AuditImportError) as refused:
        await copy.import_records(lines)
    assert str(refused.value) == (
        "line 9: thread:t-1 #7 answered (key t-1#6): thread:t-1 is in this store already: an "
        "import never adds to a trail it holds"
    )
    assert await export(copy) == before
    assert await copy.import_records(lines[:8]) == 0  # what it holds: skipped


async def test_a_forged_answer_pre_empts_no_key_of_a_live_thread(log: AuditLog):
    """The red team's import on the live store: mallory's `cancelled` under the key the
    thread's answer will have, appended to its trail or in a scope of its own. Refused, the
    thread's real answer (bob's approval) is recorded when it comes."""
    asked = record("t-1#int-1#asked", thread_id="t-1", interrupt_id="int-1")
    await log.append(batch("thread:t-1", [asked]))
    [stored] = await everything(log)
    key = "t-1#int-1#answered"
    forged = {
        **stored.exported(), "seq": 2, "key": key, "kind": "answered", "principal": "mallory",
        "data": {"status": "cancelled"}, "prev": stored.hash,
    }  # fmt: skip
    forged["hash"] = record_hash(forged, ROGUE)  # the best they can do without the key
    elsewhere = {**forged, "scope": "thread:t-evil", "seq": 1, "prev": GENESIS}
    elsewhere["hash"] = record_hash(elsewhere, ROGUE)
    for line in (forged, elsewhere):
        with pytest.raises(AuditImportError, match="hash does not match its content"):
            await log.import_records([line])
    # Even a keyed line, in the live scope: refused before its key is looked at.
    keyed = {**forged, "hash": rehash(forged)}
    with pytest.raises(AuditImportError, match="thread:t-1 is in this store already"):
        await log.import_records([keyed])
    answer = record(key, "answered", thread_id="t-1", interrupt_id="int-1", principal="bob",
                    data={"status": "resolved"})  # fmt: skip
    assert await log.append(batch("thread:t-1", [answer])) == 1
    assert [(r.key, r.principal) for r in await everything(log)] == [
        ("t-1#int-1#asked", None), (key, "bob")
    ]  # fmt: skip


async def test_an_import_of_a_pruned_trail_needs_its_anchor_line(log: AuditLog, copy: AuditLog):
    old = datetime(2026, 1, 1, tzinfo=UTC)
    recorded = [old, old, datetime.now(UTC)]
    assert await log.import_records(trail_lines("thread:t-1", recorded)) == 3
    assert await log.prune(datetime(2026, 3, 1, tzinfo=UTC)) == 2
    lines = [json.loads(x) for x in (await export(log)).splitlines()]
    assert [next(iter(line)) for line in lines] == ["anchor", "scope"]
    with pytest.raises(AuditImportError, match=r"^line 1: .* starts here, past #1, with no anchor"):
        await copy.import_records(lines[1:])
    forged = {**lines[0], "mac": "0" * 64}
    with pytest.raises(AuditImportError, match=r"^line 1: thread:t-1's anchor \(at #2\): its MAC"):
        await copy.import_records([forged, lines[1]])
    assert await copy.import_records(lines) == 1
    assert await copy.import_records(lines) == 0  # the anchor and the record: held
    assert await verified(copy) == (1, None)


async def test_a_rotated_key_still_verifies_what_it_keyed(
    log: AuditLog, engine: AsyncEngine, copy: AuditLog
):
    await filled(log)
    rotated = AuditKeys.of("the next audit key, after a rotation", TEST_AUDIT_KEY)
    after = AuditLog(engine, rotated)
    await after.append(batch("thread:t-1", thread_life("t-1", 7)))
    assert await verified(after) == (9, None)
    assert {r.key_id for r in await everything(after)} == {AUDIT_KEYS.current.id,
                                                           rotated.current.id}  # fmt: skip
    _, broken = await verified(AuditLog(engine, AuditKeys(rotated.current)))
    assert broken is not None and broken.problem.startswith(f"key '{AUDIT_KEYS.current.id}'")
    lines = [json.loads(x) for x in (await export(after)).splitlines()]
    assert await AuditLog(copy.engine, rotated).import_records(lines) == 9


async def test_a_key_taken_behind_the_stores_back_is_said_when_the_real_record_comes(
    log: AuditLog, engine: AsyncEngine, caplog: pytest.LogCaptureFixture
):
    """Written into the database directly, a record under the key a thread's answer will
    have pre-empts it (a key is stored once): `verify` names the forged record, and the
    worker says which record of which scope it did not write."""
    forged = trail_lines("thread:t-evil", [datetime.now(UTC)], audit_key=ROGUE,
                         key="t-1#int-1#answered")  # fmt: skip
    async with engine.begin() as db:
        row = audit_module._row(forged[0], datetime.now(UTC), datetime.now(UTC))
        await db.execute(sa.insert(audit_records).values(row))
    answer = record("t-1#int-1#answered", "answered", thread_id="t-1", principal="bob")
    assert await log.append(batch("thread:t-1", [answer])) == 0
    assert (
        "audit: thread:t-1's record t-1#int-1#answered not written: its key is held in "
        "thread:t-evil"
    ) in caplog.text
    _, broken = await verified(log)
    assert broken is not None and broken.scope == "thread:t-evil"
