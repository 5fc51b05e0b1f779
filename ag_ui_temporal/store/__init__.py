"""The store: the tools' outbox, the transcript archive, the notifications sent, the
people the gateway learned from sign-in tokens, the audit trail and the deployment's own
random keys, in one SQL database.

SQLite under `DATA_DIR` for `make run`, PostgreSQL (`DATABASE_URL`) for docker-compose and
Kubernetes; the schema is created and upgraded by `ag-ui-temporal migrate` (Alembic), never
on import.
"""

from ag_ui_temporal.store.audit import (
    GENESIS,
    AuditImportError,
    AuditLog,
    AuditQuery,
    Broken,
    Reader,
    StoredRecord,
    Verified,
    ndjson_line,
    record_hash,
)
from ag_ui_temporal.store.audit_heads import AuditHeads, HeadsError
from ag_ui_temporal.store.audit_keys import AuditKey, AuditKeyMissing, AuditKeys, audit_keys
from ag_ui_temporal.store.engine import open_engine
from ag_ui_temporal.store.notifications import Delivery, NotificationLog, UsedLinks
from ag_ui_temporal.store.outbox import Outbox, Recorded
from ag_ui_temporal.store.people import KnownPeople
from ag_ui_temporal.store.secrets import ServerSecrets
from ag_ui_temporal.store.transcript import (
    ArchivedEvent,
    MessagePage,
    Transcript,
    TranscriptConflict,
)

__all__ = [
    "GENESIS",
    "ArchivedEvent",
    "AuditHeads",
    "AuditImportError",
    "AuditKey",
    "AuditKeyMissing",
    "AuditKeys",
    "AuditLog",
    "AuditQuery",
    "Broken",
    "Delivery",
    "HeadsError",
    "KnownPeople",
    "MessagePage",
    "NotificationLog",
    "Outbox",
    "Reader",
    "Recorded",
    "ServerSecrets",
    "StoredRecord",
    "Transcript",
    "TranscriptConflict",
    "UsedLinks",
    "Verified",
    "audit_keys",
    "ndjson_line",
    "open_engine",
    "record_hash",
]
