"""The store's tables (SQLAlchemy Core), shared by the queries and the migrations.

`effects` is the tools' outbox: one row per idempotency key, so a retried activity finds
the first attempt's result, on whichever worker it ran. `messages` and `events` are the
transcript archive: a thread's messages by position and its AG-UI events by offset;
`settled_interrupts` the answered interrupts that left a thread's state with their runs (a
repeated resume of one is answered from the archive). `notifications` and `used_links`
are the approvers' side: what each channel was told, and which decision links were used;
`people` the addresses and names the gateway learned from sign-in tokens. `audit_records` is
the audit trail, a hash chain per scope (a thread, a chain) that outlives the workflows;
`audit_readers` who may read each scope, `audit_anchors` where a pruned trail now starts.
`server_secrets` holds the random keys every gateway replica shares (made once, never sent).
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa

metadata = sa.MetaData()


def _now() -> datetime:
    # Set by the client, to the microsecond: effects list oldest first on both engines
    # (SQLite's CURRENT_TIMESTAMP has whole seconds).
    return datetime.now(UTC)


def _created_at() -> sa.Column[datetime]:
    return sa.Column(
        "created_at",
        sa.DateTime(timezone=True),
        nullable=False,
        default=_now,
        server_default=sa.func.now(),
    )


effects = sa.Table(
    "effects",
    metadata,
    sa.Column("key", sa.Text, primary_key=True),
    sa.Column("tool", sa.Text, nullable=False),
    sa.Column("args", sa.JSON, nullable=False),
    sa.Column("result", sa.JSON, nullable=False),
    _created_at(),
)

messages = sa.Table(
    "messages",
    metadata,
    sa.Column("thread_id", sa.Text, primary_key=True),
    sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("message_id", sa.Text, nullable=False),
    sa.Column("role", sa.Text, nullable=False),
    sa.Column("body", sa.JSON, nullable=False),
    _created_at(),
    sa.UniqueConstraint("thread_id", "message_id", name="uq_messages_thread_message"),
)

events = sa.Table(
    "events",
    metadata,
    sa.Column("thread_id", sa.Text, primary_key=True),
    sa.Column("offset", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("run_id", sa.Text, nullable=False),
    sa.Column("event", sa.JSON, nullable=False),
    _created_at(),
)

settled_interrupts = sa.Table(
    "settled_interrupts",
    metadata,
    sa.Column("thread_id", sa.Text, primary_key=True),
    sa.Column("interrupt_id", sa.Text, primary_key=True),
    sa.Column("run_id", sa.Text, nullable=False),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("answer_digest", sa.Text, nullable=False),
    sa.Column("resolved_by_run", sa.Text, nullable=False),
    sa.Column("allowed_resolvers", sa.JSON, nullable=True),
    _created_at(),
)

notifications = sa.Table(
    "notifications",
    metadata,
    sa.Column("key", sa.Text, primary_key=True),
    sa.Column("channel", sa.Text, primary_key=True),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("principal", sa.Text, nullable=False),
    sa.Column("interrupt_id", sa.Text, nullable=True),
    sa.Column("thread_id", sa.Text, nullable=False),
    sa.Column("chain_id", sa.Text, nullable=True, index=True),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, default=_now),
    _created_at(),
)
"""Each notice's delivery on each channel (`store.notifications`): sent once per key and
channel, and what a failing channel said, for the chain's view."""

used_links = sa.Table(
    "used_links",
    metadata,
    sa.Column("jti", sa.Text, primary_key=True),
    sa.Column("principal", sa.Text, nullable=False),
    sa.Column("interrupt_id", sa.Text, nullable=False),
    _created_at(),
)
"""Decision links that were used: a link decides once (`store.notifications.UsedLinks`)."""

people = sa.Table(
    "people",
    metadata,
    sa.Column("principal", sa.Text, primary_key=True),
    sa.Column("email", sa.Text, nullable=True),
    sa.Column("name", sa.Text, nullable=True),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, default=_now),
)
"""Who a principal is, as their sign-in token said (`store.people.KnownPeople`): the email
(a verified one only) and name a notification uses when the directory file has none."""

server_secrets = sa.Table(
    "server_secrets",
    metadata,
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("secret", sa.Text, nullable=False),
    _created_at(),
)
"""Random keys of the deployment, by name, made by the first process that needs one
(`store.secrets.ServerSecrets`): every gateway replica reads the same."""


audit_records = sa.Table(
    "audit_records",
    metadata,
    # BIGSERIAL on PostgreSQL; SQLite's INTEGER PRIMARY KEY is its rowid, AUTOINCREMENT so an
    # id is never reused after a prune (an id is the API's paging cursor).
    sa.Column(
        "id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True,
        autoincrement=True,
    ),
    sa.Column("scope", sa.Text, nullable=False),
    sa.Column("seq", sa.BigInteger, nullable=False),
    sa.Column("key", sa.Text, nullable=False),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("at", sa.Text, nullable=False),
    sa.Column("occurred_at", sa.DateTime(timezone=True), nullable=False, index=True),
    sa.Column("thread_id", sa.Text, nullable=True, index=True),
    sa.Column("chain_id", sa.Text, nullable=True, index=True),
    sa.Column("interrupt_id", sa.Text, nullable=True),
    sa.Column("run_id", sa.Text, nullable=True),
    sa.Column("principal", sa.Text, nullable=True, index=True),
    sa.Column("data", sa.JSON, nullable=False),
    sa.Column("prev", sa.Text, nullable=False),
    sa.Column("key_id", sa.Text, nullable=True),
    sa.Column("hash", sa.Text, nullable=False),
    sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False, default=_now),
    sa.UniqueConstraint("key", name="uq_audit_records_key"),
    sa.UniqueConstraint("scope", "seq", name="uq_audit_records_scope_seq"),
    sa.Index("ix_audit_records_recorded_at", "recorded_at", "id"),
    sqlite_autoincrement=True,
)  # fmt: skip
"""The audit trail (`store.audit.AuditLog`): each record once per key, `seq` 1, 2, ... and a
hash chain (`prev`, `hash`) per scope, `hash` an HMAC under the audit key `key_id` names
(NULL: a record written before the trail had a key, its hash a plain SHA-256). `at` is the
workflow's time as it was hashed, `occurred_at` the same parsed (for `since`); `recorded_at`
the store's clock (for pruning)."""

audit_readers = sa.Table(
    "audit_readers",
    metadata,
    sa.Column("scope", sa.Text, primary_key=True),
    sa.Column("principal", sa.Text, primary_key=True),
    sa.Index("ix_audit_readers_principal", "principal"),
)
"""Who may read a scope besides auditors: a principal or `group:G`."""

audit_anchors = sa.Table(
    "audit_anchors",
    metadata,
    sa.Column("scope", sa.Text, primary_key=True),
    sa.Column("seq", sa.BigInteger, nullable=False),
    sa.Column("hash", sa.Text, nullable=False),
    sa.Column("key_id", sa.Text, nullable=True),
    sa.Column("mac", sa.Text, nullable=True),
)
"""Where a pruned scope's trail now starts: the last dropped record's `seq` and `hash`, and
the prune's `mac` of them under the audit key `key_id` (NULL: an anchor from before keys)."""
