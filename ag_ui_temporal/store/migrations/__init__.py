"""Alembic migrations of the store's schema (run by `python -m ag_ui_temporal.store.migrate`)."""
