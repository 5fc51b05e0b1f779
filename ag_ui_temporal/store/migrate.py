"""Create or upgrade the store's schema to the newest migration (`ag-ui-temporal migrate`).

An explicit step, never run on import: `make run` runs it at start (SQLite), docker-compose
runs it as a one-shot service and Kubernetes as a Job before the worker and gateway start.
The database is the one the processes use: `DATABASE_URL`, else SQLite under `DATA_DIR`.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import make_url, text
from sqlalchemy.engine import Connection

from ag_ui_temporal.store.engine import open_engine

MIGRATIONS = Path(__file__).parent / "migrations"
MIGRATION_LOCK = 0x61677569  # "agui": the advisory lock migrations take on PostgreSQL


def alembic_config(url: str, connection: Connection | None = None) -> Config:
    """Alembic's configuration for this package's migrations (no alembic.ini needed)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["url"] = url
    config.attributes["connection"] = connection
    return config


async def upgrade(url: str, revision: str = "head") -> None:
    """Run the migrations up to `revision` on the database at `url`."""
    engine = open_engine(url)
    try:
        async with engine.begin() as db:
            if db.dialect.name == "postgresql":
                # Pods migrating at once (an init container each) take turns, in one
                # transaction with the migration: the later ones find the schema at head.
                await db.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK}
                )
            await db.run_sync(lambda sync: command.upgrade(alembic_config(url, sync), revision))
    finally:
        await engine.dispose()


async def create_database(url: str) -> bool:
    """Create the PostgreSQL database `url` names unless it exists (True if it was created),
    through the server's `postgres` database. SQLite files need no such step."""
    target = make_url(url)
    if target.get_backend_name() != "postgresql":
        return False
    engine = open_engine(target.set(database="postgres").render_as_string(hide_password=False))
    try:
        async with engine.connect() as db:
            await db.execution_options(isolation_level="AUTOCOMMIT")
            query = text("SELECT 1 FROM pg_database WHERE datname = :name")
            if await db.scalar(query, {"name": target.database}):
                return False
            quoted = db.dialect.identifier_preparer.quote(str(target.database))
            await db.execute(text(f"CREATE DATABASE {quoted}"))
            return True
    finally:
        await engine.dispose()


async def migrate(url: str, *, create: bool = False) -> None:
    """The init step: the database (with `create`), then its schema at the newest revision."""
    if create:
        await create_database(url)
    await upgrade(url)
