"""Alembic migrations of the store's schema (run by `ag-ui-temporal migrate`)."""
