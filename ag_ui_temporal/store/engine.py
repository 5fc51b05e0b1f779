"""Opening the store's database: SQLite (aiosqlite) for `make run`, PostgreSQL (asyncpg)
for docker-compose and Kubernetes. Both speak SQLAlchemy 2's async API."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

SQLITE_BUSY_TIMEOUT = 30.0
"""Seconds a SQLite writer waits for another's lock (workers share the file) before failing."""


def open_engine(url: str) -> AsyncEngine:
    """An engine for `url`; nothing connects until the first query.

    SQLite opens a connection per use (no pool: nothing to close, and another process's
    write lock is waited for); its directory is created here. PostgreSQL keeps a pool,
    checked before use so a restarted server is not seen as a failed query.
    """
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        return create_async_engine(
            parsed, poolclass=NullPool, connect_args={"timeout": SQLITE_BUSY_TIMEOUT}
        )
    if parsed.get_backend_name() == "postgresql":
        return create_async_engine(parsed, pool_pre_ping=True, pool_size=5, max_overflow=5)
    raise ValueError(f"DATABASE_URL: unsupported engine {parsed.drivername!r}")
