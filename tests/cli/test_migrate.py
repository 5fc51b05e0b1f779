"""`ag-ui-temporal migrate`: the init step compose and Kubernetes run before the processes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from pathlib import Path

import sqlalchemy as sa

from ag_ui_temporal.store import open_engine
from tests.postgres import Cluster

BIN = Path(sys.executable).parent


async def table_names(url: str) -> set[str]:
    engine = open_engine(url)
    try:
        async with engine.connect() as db:
            return await db.run_sync(lambda sync: set(sa.inspect(sync).get_table_names()))
    finally:
        await engine.dispose()


def test_migrate_creates_the_database_and_its_schema(postgres: Cluster, tmp_path: Path):
    url = postgres.url(f"agui_{uuid.uuid4().hex[:8]}")
    env = {**os.environ, "DATABASE_URL": url, "LOG_FORMAT": "text"}
    for _ in range(2):  # a re-run (a restarted Job or init container) succeeds
        done = subprocess.run(
            [str(BIN / "ag-ui-temporal"), "migrate", "--create-database"],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    assert "newest migration" in done.stdout + done.stderr
    assert {"alembic_version", "effects", "messages", "events"} <= asyncio.run(table_names(url))
