"""Alembic's environment: runs the migrations on the connection `store.migrate` hands over
(or, run from the `alembic` command, on an async engine for the configured URL)."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection

from ag_ui_temporal.store.engine import open_engine
from ag_ui_temporal.store.tables import metadata


def run_on(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=metadata)
    with context.begin_transaction():
        context.run_migrations()


async def run_on_new_engine(url: str) -> None:
    engine = open_engine(url)
    try:
        async with engine.begin() as db:
            await db.run_sync(run_on)
    finally:
        await engine.dispose()


def configured_url() -> str:
    """`store.migrate`'s URL, else the processes' own (`DATABASE_URL` or SQLite in `DATA_DIR`)."""
    from ag_ui_temporal.settings import get_settings

    return context.config.attributes.get("url") or get_settings().store_url


connection = context.config.attributes.get("connection")
if context.is_offline_mode():  # `alembic upgrade --sql`: the SQL for a DBA to run
    context.configure(url=configured_url(), target_metadata=metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
elif connection is not None:
    run_on(connection)
else:
    asyncio.run(run_on_new_engine(configured_url()))
