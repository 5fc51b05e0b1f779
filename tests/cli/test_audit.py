"""`ag-ui-temporal audit verify|export|import|prune` on the store `DATABASE_URL` names: exit 0
on a sound trail, 1 naming the first broken record; an export imports into another store."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from ag_ui_temporal.cli import main
from ag_ui_temporal.settings import get_settings, sqlite_url
from ag_ui_temporal.store import AuditLog, open_engine
from ag_ui_temporal.store.migrate import upgrade
from ag_ui_temporal.store.tables import audit_records
from ag_ui_temporal.workflows.contract.audit import AuditBatch, AuditRecord

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
            await AuditLog(engine).append(AuditBatch(scope="thread:t-1", records=trail))
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

    def run(url: str, *argv: str, retention: str | None = None) -> int:
        monkeypatch.setenv("DATABASE_URL", url)
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
    asyncio.run(new_store(url, 3))
    assert cli(url, "prune") == 0  # AUDIT_RETENTION unset: forever
    assert "kept forever, nothing was dropped" in capsys.readouterr().out
    assert cli(url, "prune", retention="1d") == 0
    assert capsys.readouterr().out.startswith("0 records stored before ")

    old = datetime.now(UTC) - timedelta(days=3)
    asyncio.run(execute(url, sa.update(audit_records).where(audit_records.c.seq <= 2).values(
        recorded_at=old)))  # fmt: skip
    assert cli(url, "prune", retention="1d") == 0
    assert capsys.readouterr().out.startswith("2 records stored before ")
    assert cli(url, "verify") == 0
    assert capsys.readouterr().out == "1 records verified\n"

    later = (datetime.now(UTC) + timedelta(minutes=1)).isoformat()
    assert cli(url, "prune", "--before", later) == 0
    assert capsys.readouterr().out.startswith("1 records stored before ")


def test_a_time_without_an_offset_is_refused(
    cli: Cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    url = sqlite_url(tmp_path / "store.sqlite3")
    assert cli(url, "export", "--since", "2026-12-01T10:00:00") == 2
    assert "needs an offset" in capsys.readouterr().err
