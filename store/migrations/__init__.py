"""Alembic migrations of the store's schema (run by `python -m store.migrate`)."""
