"""INSERT ... ON CONFLICT DO NOTHING, the one statement both engines need in their own dialect."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql.dml import Insert


def insert_if_absent(engine: AsyncEngine, table: sa.Table) -> Insert:
    """An insert into `table` that skips rows whose key (or a unique column) already exists.

    Atomic on both engines, so two workers racing on one key both succeed and one row is
    kept: on PostgreSQL the second waits for the first's commit, then does nothing.
    """
    if engine.dialect.name == "sqlite":
        return sqlite.insert(table).on_conflict_do_nothing()
    return postgresql.insert(table).on_conflict_do_nothing()
