"""The store: the tools' outbox, the transcript archive, the notifications sent and the
people the gateway learned from sign-in tokens, in one SQL database.

SQLite under `DATA_DIR` for `make run`, PostgreSQL (`DATABASE_URL`) for docker-compose and
Kubernetes; the schema is created and upgraded by `ag-ui-temporal migrate` (Alembic), never
on import.
"""

from ag_ui_temporal.store.engine import open_engine
from ag_ui_temporal.store.notifications import Delivery, NotificationLog, UsedLinks
from ag_ui_temporal.store.outbox import Outbox, Recorded
from ag_ui_temporal.store.people import KnownPeople
from ag_ui_temporal.store.transcript import (
    ArchivedEvent,
    MessagePage,
    Transcript,
    TranscriptConflict,
)

__all__ = [
    "ArchivedEvent",
    "Delivery",
    "KnownPeople",
    "MessagePage",
    "NotificationLog",
    "Outbox",
    "Recorded",
    "Transcript",
    "TranscriptConflict",
    "UsedLinks",
    "open_engine",
]
