"""Fixtures for the store's tests: each test runs on SQLite and on a real PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from ag_ui_temporal.store import open_engine
from ag_ui_temporal.store.migrate import upgrade
from tests.conftest import new_database


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a new, empty database on each engine."""
    return new_database(request, request.param, tmp_path)


@pytest.fixture
async def store_url(empty_url: str) -> str:
    """A new database at the newest schema."""
    await upgrade(empty_url)
    return empty_url


@pytest.fixture
async def engine(store_url: str) -> AsyncIterator[AsyncEngine]:
    engine = open_engine(store_url)
    yield engine
    await engine.dispose()
