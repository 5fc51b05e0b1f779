"""`ag-ui-temporal audit verify|heads|export|import|prune|keygen` on the store `DATABASE_URL`
names, under `AUDIT_KEY`: exit 0 on a sound trail, 1 naming the first broken record, or what
an earlier heads export says was lost; an export imports into another store, and nothing
made up does. The red team's tampering, each on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from ag_ui_temporal.cli import main
from ag_ui_temporal.settings import get_settings, sqlite_url
from ag_ui_temporal.store import AuditKey, AuditLog, AuditQuery, Reader, open_engine
from ag_ui_temporal.store.migrate import upgrade
from ag_ui_temporal.store.tables import audit_records
from ag_ui_temporal.workflows.contract.audit import AuditBatch, AuditRecord
from tests.audit_trails import AUDIT_KEYS, TEST_AUDIT_KEY, trail_lines
from tests.conftest import new_database

EVERYTHING = Reader(principal="", everything=True)

Cli = Callable[..., int]


async def new_store(url: str, records: int = 0) -> None:
    """A migrated store at `url` with a thread's trail of `records` records."""
    await upgrade(url)
    engine = open_engine(url)
    try:
        trail = [
            AuditRecord(key=f"t-1#{i}", kind="answered" if i == 1 else "asked",
                        at="2026-12-01T10:00:00Z", thread_id="t-1", principal="alice",
                        data={"payload": {"editedArgs": {"to": "grace@example.com"}}})
            for i in range(records)
        ]  # fmt: skip
        if trail:
            await AuditLog(engine, AUDIT_KEYS).append(AuditBatch(scope="thread:t-1", records=trail))
    finally:
        await engine.dispose()


async def execute(url: str, statement: sa.Executable) -> None:
    engine = open_engine(url)
    try:
        async with engine.begin() as db:
            await db.execute(statement)
    finally:
        await engine.dispose()


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Iterator[Cli]:
    """`main([...])` in this process on the store at `url`; its exit code."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level  # the command sets its own up

    def run(
        url: str, *argv: str, retention: str | None = None, key: str | None = TEST_AUDIT_KEY
    ) -> int:
        monkeypatch.setenv("DATABASE_URL", url)
        if key is None:
            monkeypatch.delenv("AUDIT_KEY", raising=False)
        else:
            monkeypatch.setenv("AUDIT_KEY", key)
        if retention is None:
            monkeypatch.delenv("AUDIT_RETENTION", raising=False)
        else:
            monkeypatch.setenv("AUDIT_RETENTION", retention)
        get_settings.cache_clear()
        try:
            main(["audit", *argv])
        except SystemExit as done:
            return int(done.code or 0)
        raise AssertionError("audit always exits with its code")

    yield run
    get_settings.cache_clear()
    root.handlers[:] = handlers
    root.setLevel(level)


def test_verify_exits_1_naming_the_changed_record(
    cli: Cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    url = sqlite_url(tmp_path / "store.sqlite3")
    asyncio.run(new_store(url, 3))
    assert cli(url, "verify") == 0
    assert capsys.readouterr().out == "3 records verified\n"

    data = {"payload": {"editedArgs": {"to": "mallory@example.com"}}}
    asyncio.run(execute(url, sa.update(audit_records).where(audit_records.c.seq == 2).values(
        data=data)))  # fmt: skip
    assert cli(url, "verify") == 1
    err = capsys.readouterr().err
    assert "thread:t-1 #2 answered (key t-1#1): hash does not match its content" in err


def test_an_export_to_a_file_imports_into_another_store(
    cli: Cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    source, target = sqlite_url(tmp_path / "a.sqlite3"), sqlite_url(tmp_path / "b.sqlite3")
    asyncio.run(new_store(source, 4))
    asyncio.run(new_store(target))
    assert cli(source, "export") == 0
    out = capsys.readouterr()
    assert out.err == "4 records exported\n"
    exported = tmp_path / "trail.ndjson"
    assert cli(source, "export", "-o", str(exported)) == 0
    assert exported.read_text() == out.out and len(out.out.splitlines()) == 4
    assert [json.loads(line)["seq"] for line in out.out.splitlines()] == [1, 2, 3, 4]
    assert not list(tmp_path.glob("*.partial"))

    assert cli(target, "import", str(exported)) == 0
    assert capsys.readouterr().out == "4 records imported\n"
    assert cli(target, "verify") == 0
    again = tmp_path / "again.ndjson"
    assert cli(target, "export", "--thread", "t-1", "-o", str(again)) == 0
    assert again.read_bytes() == exported.read_bytes()

    # Filters: another thread's, and a time after every record.
    capsys.readouterr()
    assert cli(source, "export", "--thread", "t-2") == 0
    assert cli(source, "export", "--since", "2026-12-01T10:00:01+00:00") == 0
    assert capsys.readouterr().out == ""


def test_an_import_refuses_a_tampered_file_and_keeps_nothing(
    cli: Cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    source, target = sqlite_url(tmp_path / "a.sqlite3"), sqlite_url(tmp_path / "b.sqlite3")
    asyncio.run(new_store(source, 3))
    asyncio.run(new_store(target))
    exported = tmp_path / "trail.ndjson"
    assert cli(source, "export", "-o", str(exported)) == 0
    lines = exported.read_text().splitlines()
    tampered = tmp_path / "tampered.ndjson"
    tampered.write_text("\n".join([lines[0], lines[1].replace("grace@", "mallory@"), lines[2]]))
    capsys.readouterr()
    assert cli(target, "import", str(tampered)) == 1
    err = capsys.readouterr().err
    assert "line 2: thread:t-1 #2 answered (key t-1#1): hash does not match its content" in err
    assert "nothing was imported" in err
    assert cli(target, "verify") == 0
    assert capsys.readouterr().out == "0 records verified\n"

    broken = tmp_path / "broken.ndjson"
    broken.write_text(f"{lines[0]}\n{{not json\n")
    assert cli(target, "import", str(broken)) == 1
    assert "line 2: not JSON" in capsys.readouterr().err


def test_prune_drops_what_the_retention_no_longer_keeps(
    cli: Cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    url = sqlite_url(tmp_path / "store.sqlite3")
    asyncio.run(new_store(url))
    old = datetime.now(UTC) - timedelta(days=3)
    asyncio.run(imported(url, trail_lines("thread:t-1", [old, old, datetime.now(UTC)])))
    assert cli(url, "prune") == 0  # AUDIT_RETENTION unset: forever
    assert "kept forever, nothing was dropped" in capsys.readouterr().out
    assert cli(url, "prune", retention="4d") == 0
    assert capsys.readouterr().out.startswith("0 records stored before ")
    assert cli(url, "prune", retention="1d") == 0
    assert capsys.readouterr().out.startswith("2 records stored before ")
    assert cli(url, "verify") == 0
    assert capsys.readouterr().out == "1 records verified, from 1 anchors\n"

    later = (datetime.now(UTC) + timedelta(minutes=1)).isoformat()
    assert cli(url, "prune", "--before", later) == 0
    assert capsys.readouterr().out.startswith("1 records stored before ")


async def imported(url: str, lines: list[dict[str, Any]]) -> None:
    engine = open_engine(url)
    try:
        await AuditLog(engine, AUDIT_KEYS).import_records(lines)
    finally:
        await engine.dispose()


def test_a_time_without_an_offset_is_refused(
    cli: Cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    url = sqlite_url(tmp_path / "store.sqlite3")
    assert cli(url, "export", "--since", "2026-12-01T10:00:00") == 2
    assert "needs an offset" in capsys.readouterr().err


# -- the red team's tampering, by someone with the database but not the key ---------------


@pytest.fixture(params=["sqlite", "postgresql"])
def trails(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store (on each engine) with thread t-1's trail of 6 records and t-2's of 2."""
    url = new_database(request, request.param, tmp_path)
    asyncio.run(new_store(url, 6))
    now = [datetime.now(UTC)] * 2
    asyncio.run(imported(url, trail_lines("thread:t-2", now)))
    return url


def said(capsys: pytest.CaptureFixture[str]) -> str:
    out = capsys.readouterr()
    return out.out + out.err


@pytest.mark.parametrize("deleted", ["the last record", "a whole scope"])
def test_deleted_newest_records_show_against_a_heads_export_taken_before(
    cli: Cli, trails: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], deleted: str
):
    heads = tmp_path / "heads.ndjson"
    assert cli(trails, "heads", "-o", str(heads)) == 0
    assert said(capsys) == "2 heads exported, signed\n"
    assert cli(trails, "verify", "--heads", str(heads)) == 0
    assert said(capsys) == f"8 records verified; each of the 2 scopes in {heads} reaches its head\n"

    t = audit_records.c
    if deleted == "the last record":
        asyncio.run(execute(trails, sa.delete(audit_records).where(t.scope == "thread:t-1",
                                                                   t.seq == 6)))  # fmt: skip
        lost = "thread:t-1 ends at #5, its head at #6: #6 was deleted"
    else:
        asyncio.run(execute(trails, sa.delete(audit_records).where(t.scope == "thread:t-2")))
        lost = "thread:t-2 is gone: its head is #2, the store holds nothing of it"
    assert cli(trails, "verify") == 0  # what the chain alone cannot show
    capsys.readouterr()
    assert cli(trails, "verify", "--heads", str(heads)) == 1
    assert said(capsys).startswith(f"the audit trail lost records: {lost} (the heads taken at ")

    # A heads file changed to hide it is no heads file.
    lines = heads.read_bytes().splitlines(keepends=True)
    edited = tmp_path / "edited.ndjson"
    edited.write_bytes(b"".join(line for line in lines if b"thread:t-2" not in line))
    assert cli(trails, "verify", "--heads", str(edited)) == 1
    assert said(capsys) == (
        f"{edited}: its signature does not match it: changed since it was taken\n"
    )


def test_first_records_deleted_behind_a_made_up_anchor_show(
    cli: Cli, trails: str, capsys: pytest.CaptureFixture[str]
):
    from ag_ui_temporal.store.tables import audit_anchors

    async def second_hash() -> str:
        engine = open_engine(trails)
        try:
            async with engine.connect() as db:
                t = audit_records.c
                query = sa.select(t.hash).where(t.scope == "thread:t-1", t.seq == 2)
                return str((await db.execute(query)).scalar_one())
        finally:
            await engine.dispose()

    digest = asyncio.run(second_hash())
    t = audit_records.c
    asyncio.run(execute(trails, sa.delete(audit_records).where(t.scope == "thread:t-1",
                                                               t.seq <= 2)))  # fmt: skip
    asyncio.run(execute(trails, sa.insert(audit_anchors).values(scope="thread:t-1", seq=2,
                                                                hash=digest)))  # fmt: skip
    assert cli(trails, "verify") == 1
    assert said(capsys).startswith(
        "the audit trail is broken at thread:t-1's anchor (at #2): not keyed: written before "
        "the trail had a key, or by someone without it"
    )


def test_a_rewritten_answer_shows_though_every_later_hash_was_recomputed(
    cli: Cli, trails: str, capsys: pytest.CaptureFixture[str]
):
    asyncio.run(rewrite(trails))
    assert cli(trails, "verify") == 1
    assert said(capsys) == (
        "the audit trail is broken at thread:t-1 #2 answered (key t-1#1): hash does not match "
        "its content (2 records read)\n"
    )


async def rewrite(url: str) -> None:
    """The answer's edited `to` changed and #2..#6 rehashed and relinked, as the trail's own
    rule for hashes reads (SHA-256 of the record), by someone without the key."""
    from ag_ui_temporal.store import record_hash

    engine = open_engine(url)
    try:
        log = AuditLog(engine)
        trail = [r async for r in log.stream(AuditQuery(scope="thread:t-1"), EVERYTHING)]
        prev = trail[0].hash
        async with engine.begin() as db:
            for stored in trail[1:]:
                line = {**stored.exported(), "prev": prev}
                if stored.seq == 2:
                    line["data"] = {"payload": {"editedArgs": {"to": "mallory@example.com"}}}
                line["hash"] = prev = record_hash(line, None)
                await db.execute(
                    sa.update(audit_records)
                    .where(audit_records.c.id == stored.id)
                    .values(data=line["data"], prev=line["prev"], hash=line["hash"])
                )
    finally:
        await engine.dispose()


@pytest.mark.parametrize("forged", ["a made-up scope", "a record after a live one",
                                    "a pre-empting answer"])  # fmt: skip
def test_a_forged_import_is_refused_and_writes_nothing(
    cli: Cli, trails: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], forged: str
):
    rogue = AuditKey.of("a key of someone who holds only the database")
    before = tmp_path / "before.ndjson"
    assert cli(trails, "export", "-o", str(before)) == 0
    last = json.loads(before.read_text().splitlines()[5])  # thread:t-1 #6
    assert (last["scope"], last["seq"]) == ("thread:t-1", 6)
    if forged == "a made-up scope":
        lines = trail_lines("thread:t-9", [datetime.now(UTC)] * 2, audit_key=None)
        refused = "line 1: thread:t-9 #1 asked (key thread:t-9#1): not keyed"
    elif forged == "a record after a live one":  # made with the key: still not into t-1
        lines = trail_lines("thread:t-1", [datetime.now(UTC)], start=7, prev=last["hash"])
        refused = "line 1: thread:t-1 #7 asked (key thread:t-1#7): thread:t-1 is in this store"
    else:  # mallory's `cancelled` under the key the thread's answer will have
        lines = trail_lines("thread:t-evil", [datetime.now(UTC)], audit_key=rogue,
                            key="t-1#int-1#answered", kind="answered", principal="mallory",
                            data={"status": "cancelled"})  # fmt: skip
        refused = "line 1: thread:t-evil #1 answered (key t-1#int-1#answered): keyed with key"
    file = tmp_path / "forged.ndjson"
    file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    capsys.readouterr()
    assert cli(trails, "import", str(file)) == 1
    err = said(capsys)
    assert err.startswith(f"{file}: {refused}") and err.endswith("; nothing was imported\n")
    after = tmp_path / "after.ndjson"
    assert cli(trails, "export", "-o", str(after)) == 0
    assert after.read_bytes() == before.read_bytes()


def test_without_a_key_a_shared_store_is_not_verified(
    cli: Cli, trails: str, capsys: pytest.CaptureFixture[str]
):
    """No AUDIT_KEY and not the development store: nothing is verified (nor keyed)."""
    if trails.startswith("sqlite"):
        return  # SQLite with AUTH_MODE dev: the development key, below
    assert cli(trails, "verify", key=None) == 2
    assert said(capsys) == (
        "ag-ui-temporal audit: AUDIT_KEY is not set and the store is not SQLite (its workers "
        "need one key): set AUDIT_KEY or AUDIT_KEY_FILE to a key the database does not hold "
        "(`ag-ui-temporal audit keygen` makes one)\n"
    )


# -- the key: where it comes from, and no worker without one ------------------------------


def test_the_development_store_keys_its_trail_with_a_file_beside_it(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    """`make run` works out of the box: a SQLite store with AUTH_MODE dev and no AUDIT_KEY
    is keyed with `DATA_DIR/audit.key`, made once (owner only), never in the database."""
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("AUTH_MODE", raising=False)
    url = sqlite_url(tmp_path / "store.sqlite3")
    asyncio.run(new_store(url))
    assert cli(url, "heads", "-o", str(tmp_path / "heads"), key=None) == 0
    key_file = tmp_path / "data" / "audit.key"
    assert key_file.stat().st_mode & 0o777 == 0o600
    key = AuditKey.of(key_file.read_text())
    assert cli(url, "verify", "--heads", str(tmp_path / "heads"), key=None) == 0
    assert AuditKey.of(key_file.read_text()) == key  # made once
    signature = json.loads((tmp_path / "heads").read_text().splitlines()[-1])
    assert signature["keyId"] == key.id
    assert not any(key.secret in path.read_bytes() for path in tmp_path.glob("store.sqlite3*"))


@pytest.mark.parametrize(
    ("env", "refused"),
    [
        ({"DATABASE_URL": "postgresql+asyncpg://agui:pw@db.example/agui"},
         "AUDIT_KEY is not set and the store is not SQLite (its workers need one key): set "
         "AUDIT_KEY or AUDIT_KEY_FILE to a key the database does not hold"),
        ({"AUTH_MODE": "jwt", "JWT_SECRET": "s" * 32},
         "AUDIT_KEY is not set and AUTH_MODE jwt is no development stack"),
        ({"AUTH_MODE": "api_key", "API_KEYS_FILE": "keys.yaml"},
         "AUDIT_KEY is not set and AUTH_MODE api_key is no development stack"),
        ({"AUDIT_KEY_FILE": "/nonexistent/audit.key"},
         "AUDIT_KEY_FILE /nonexistent/audit.key: No such file or directory"),
    ],
)  # fmt: skip
def test_a_worker_without_a_key_it_may_use_does_not_start(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    env: dict[str, str],
    refused: str,
):
    """A deployment never keeps its trail unkeyed unawares: one plain line, before the worker
    connects to anything."""
    monkeypatch.delenv("AUDIT_KEY", raising=False)
    monkeypatch.setenv("DATA_DIR", str(tmp_path))
    monkeypatch.setenv("DATABASE_URL", sqlite_url(tmp_path / "store.sqlite3"))
    monkeypatch.setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")  # never reached
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    get_settings.cache_clear()
    try:
        with pytest.raises(SystemExit) as stopped:
            main(["worker"])
    finally:
        get_settings.cache_clear()
        root.handlers[:] = handlers
        root.setLevel(level)
    assert stopped.value.code == 1
    said = capsys.readouterr().err
    assert said.startswith("ag-ui-temporal: the worker will not start: ")
    assert said.count("\n") == 1  # one line
    assert refused in said
    assert not (tmp_path / "audit.key").exists()


def test_keygen_makes_a_key_and_never_overwrites_one(
    cli: Cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    url = sqlite_url(tmp_path / "store.sqlite3")
    assert cli(url, "keygen") == 0
    printed = capsys.readouterr().out.strip()
    assert len(AuditKey.of(printed).secret) == 43
    path = tmp_path / "keys" / "audit.key"
    assert cli(url, "keygen", "-o", str(path)) == 0
    kept = path.read_text()
    assert AuditKey.of(kept).secret != printed.encode()
    assert path.stat().st_mode & 0o777 == 0o600
    assert cli(url, "keygen", "-o", str(path)) == 0
    assert f"{path} exists: kept as it is" in capsys.readouterr().err
    assert path.read_text() == kept
    assert [p.name for p in path.parent.iterdir()] == ["audit.key"]  # nothing left aside


def test_a_short_key_or_two_keys_at_once_are_refused(tmp_path: Path):
    from pydantic import ValidationError

    from ag_ui_temporal.settings import Settings
    from ag_ui_temporal.store import AuditKeyMissing, audit_keys

    with pytest.raises(ValidationError, match="must be 32 bytes or more"):
        Settings(_env_file=None, audit_key="too short")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="must be 32 bytes or more"):
        Settings(_env_file=None, audit_previous_keys=["too short"])  # type: ignore[list-item]
    with pytest.raises(ValidationError, match="set AUDIT_KEY or AUDIT_KEY_FILE, not both"):
        Settings(_env_file=None, audit_key=TEST_AUDIT_KEY, audit_key_file=tmp_path)  # type: ignore[arg-type]
    short = tmp_path / "audit.key"
    short.write_text("too short\n")
    with pytest.raises(AuditKeyMissing, match=f"AUDIT_KEY_FILE {short}: an audit key is 32"):
        audit_keys(Settings(_env_file=None, audit_key_file=short))


def test_records_from_before_the_key_are_named_unless_allowed(
    cli: Cli, trails: str, capsys: pytest.CaptureFixture[str]
):
    """A store whose trail began before keys (this repository's own `.data/`): its unkeyed
    records fail `verify` by name, and `--allow-unkeyed` counts them."""
    from ag_ui_temporal.store import audit

    lines = trail_lines("thread:t-0", [datetime.now(UTC)] * 3, audit_key=None)
    rows = [audit._row(line, datetime.now(UTC), datetime.now(UTC)) for line in lines]
    asyncio.run(execute(trails, sa.insert(audit_records).values(rows)))
    assert cli(trails, "verify") == 1
    assert said(capsys).startswith(
        "the audit trail is broken at thread:t-0 #1 asked (key thread:t-0#1): not keyed: "
    )
    assert cli(trails, "verify", "--allow-unkeyed") == 0
    assert said(capsys) == (
        "11 records verified (3 unkeyed: written before the trail had a key, vouched for by none)\n"
    )
