"""The answered interrupts that left a thread's state (`settled_interrupts`).

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "settled_interrupts",
        sa.Column("thread_id", sa.Text, primary_key=True),
        sa.Column("interrupt_id", sa.Text, primary_key=True),
        sa.Column("run_id", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("answer_digest", sa.Text, nullable=False),
        sa.Column("resolved_by_run", sa.Text, nullable=False),
        sa.Column("allowed_resolvers", sa.JSON, nullable=True),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
    )


def downgrade() -> None:
    op.drop_table("settled_interrupts")
