"""Notifications sent per channel (`notifications`), decision links used (`used_links`), and
the people the gateway learned from sign-in tokens (`people`).

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "notifications",
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("channel", sa.Text, primary_key=True),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("principal", sa.Text, nullable=False),
        sa.Column("interrupt_id", sa.Text, nullable=True),
        sa.Column("thread_id", sa.Text, nullable=False),
        sa.Column("chain_id", sa.Text, nullable=True),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
    )
    op.create_index("ix_notifications_chain_id", "notifications", ["chain_id"])
    op.create_table(
        "used_links",
        sa.Column("jti", sa.Text, primary_key=True),
        sa.Column("principal", sa.Text, nullable=False),
        sa.Column("interrupt_id", sa.Text, nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
    )
    op.create_table(
        "people",
        sa.Column("principal", sa.Text, primary_key=True),
        sa.Column("email", sa.Text, nullable=True),
        sa.Column("name", sa.Text, nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("people")
    op.drop_table("used_links")
    op.drop_index("ix_notifications_chain_id", table_name="notifications")
    op.drop_table("notifications")
