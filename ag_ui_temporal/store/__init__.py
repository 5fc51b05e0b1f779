"""The store: the tools' outbox and the transcript archive in one SQL database.

SQLite under `DATA_DIR` for `make run`, PostgreSQL (`DATABASE_URL`) for docker-compose and
Kubernetes; the schema is created and upgraded by `ag-ui-temporal migrate` (Alembic), never
on import.
"""

from ag_ui_temporal.store.engine import open_engine
from ag_ui_temporal.store.outbox import Outbox, Recorded
from ag_ui_temporal.store.transcript import (
    ArchivedEvent,
    MessagePage,
    Transcript,
    TranscriptConflict,
)

__all__ = [
    "ArchivedEvent",
    "MessagePage",
    "Outbox",
    "Recorded",
    "Transcript",
    "TranscriptConflict",
    "open_engine",
]
