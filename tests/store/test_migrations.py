"""The migrations take an empty database to the newest schema, on both engines."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import sqlalchemy as sa
from alembic.script import ScriptDirectory

from ag_ui_temporal.store import KnownPeople, open_engine
from ag_ui_temporal.store.migrate import alembic_config, create_database, migrate, upgrade
from ag_ui_temporal.store.tables import metadata
from tests.postgres import Cluster

ROOT = Path(__file__).resolve().parents[2]


def inspect(connection: sa.Connection) -> tuple[set[str], str | None, dict[str, set[str]]]:
    inspector = sa.inspect(connection)
    tables = set(inspector.get_table_names())
    version = connection.scalar(sa.text("SELECT version_num FROM alembic_version"))
    columns = {t: {c["name"] for c in inspector.get_columns(t)} for t in metadata.tables}
    return tables, version, columns


async def inspected(url: str) -> tuple[set[str], str | None, dict[str, set[str]]]:
    """`inspect` on the database at `url`, through an engine of its own."""
    engine = open_engine(url)
    try:
        async with engine.connect() as db:
            return await db.run_sync(inspect)
    finally:
        await engine.dispose()


async def test_empty_to_head_twice(empty_url: str):
    await upgrade(empty_url)
    await upgrade(empty_url)  # already at head: nothing to do
    tables, version, columns = await inspected(empty_url)
    head = ScriptDirectory.from_config(alembic_config(empty_url)).get_current_head()
    assert tables == {
        "alembic_version",
        "effects",
        "messages",
        "events",
        "settled_interrupts",
        "notifications",
        "used_links",
        "people",
        "audit_records",
        "audit_readers",
        "audit_anchors",
        "server_secrets",
    }
    assert version == head
    # The migrations create what the queries use (tables.py and the versions agree).
    assert columns == {t.name: {c.name for c in t.columns} for t in metadata.tables.values()}


async def test_the_init_step_creates_the_postgresql_database(postgres: Cluster):
    url = postgres.url(f"new_{uuid.uuid4().hex[:8]}")
    await migrate(url, create=True)
    await migrate(url, create=True)  # a re-run finds both the database and the schema
    assert await create_database(url) is False
    tables, _, _ = await inspected(url)
    assert {"effects", "messages", "events"} <= tables


def test_migrate_module_runs_from_the_environment(tmp_path: Path):
    """`ag-ui-temporal migrate` reads DATA_DIR/DATABASE_URL as the processes do."""
    env = {**os.environ, "DATA_DIR": str(tmp_path)}
    env.pop("DATABASE_URL", None)
    subprocess.run(
        [sys.executable, "-m", "ag_ui_temporal.cli", "migrate"],
        env=env,
        check=True,
        timeout=60,
        cwd=ROOT,
    )
    with sqlite3.connect(tmp_path / "store.sqlite3") as db:
        names = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    assert {"alembic_version", "effects", "messages", "events"} <= names


async def test_pods_migrating_at_once_take_turns(postgres: Cluster):
    """Every worker and gateway pod runs the migrations in an init container: at once, on
    an empty database, they all succeed."""
    url = postgres.database()
    await asyncio.gather(*(upgrade(url) for _ in range(4)))
    tables, _, _ = await inspected(url)
    assert {"effects", "messages", "events"} <= tables


async def test_addresses_remembered_from_unverified_tokens_are_forgotten(empty_url: str):
    """Before 0006 any token's `email` claim was remembered, verified or not: upgrading
    forgets every address (a person's comes back at their next sign-in), and keeps names."""
    await upgrade(empty_url, "0005")
    engine = open_engine(empty_url)
    try:
        known = KnownPeople(engine)
        await known.remember("mallory", "victim@example.org", "Mallory")
        await known.remember("pat", "pat@example.com")
        await upgrade(empty_url)
        assert await known.get("mallory") == (None, "Mallory")
        assert await known.get("pat") == (None, None)
        await known.remember("pat", "pat@example.com")  # a verified token's, after
        assert await known.get("pat") == ("pat@example.com", None)
    finally:
        await engine.dispose()
