"""The store: the tools' outbox (`effects`) and the transcript archive (`messages`, `events`).

Revision ID: 0001
Revises:
Create Date: 2026-12-01
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _created_at() -> sa.Column[datetime]:
    return sa.Column(
        "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
    )


def upgrade() -> None:
    op.create_table(
        "effects",
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("tool", sa.Text, nullable=False),
        sa.Column("args", sa.JSON, nullable=False),
        sa.Column("result", sa.JSON, nullable=False),
        _created_at(),
    )
    op.create_table(
        "messages",
        sa.Column("thread_id", sa.Text, primary_key=True),
        sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("message_id", sa.Text, nullable=False),
        sa.Column("role", sa.Text, nullable=False),
        sa.Column("body", sa.JSON, nullable=False),
        _created_at(),
        sa.UniqueConstraint("thread_id", "message_id", name="uq_messages_thread_message"),
    )
    op.create_table(
        "events",
        sa.Column("thread_id", sa.Text, primary_key=True),
        sa.Column("offset", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("run_id", sa.Text, nullable=False),
        sa.Column("event", sa.JSON, nullable=False),
        _created_at(),
    )


def downgrade() -> None:
    for table in ("events", "messages", "effects"):
        op.drop_table(table)
