"""The store's fixtures (a migrated database on SQLite and on PostgreSQL) for the audit room."""

from tests.store.conftest import empty_url, engine, store_url

__all__ = ["empty_url", "engine", "store_url"]
