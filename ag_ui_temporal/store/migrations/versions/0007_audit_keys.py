"""The audit trail's keys: which key made each record's hash (`audit_records.key_id`), and
each anchor's MAC under it (`audit_anchors.key_id`, `mac`). NULL in both: written before the
trail had a key (`audit verify` says so).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # nullable columns: a plain ALTER TABLE on both engines, no table rewritten
    op.add_column("audit_records", sa.Column("key_id", sa.Text, nullable=True))
    op.add_column("audit_anchors", sa.Column("key_id", sa.Text, nullable=True))
    op.add_column("audit_anchors", sa.Column("mac", sa.Text, nullable=True))


def downgrade() -> None:
    # SQLite drops a column by copying the table (Alembic's batch mode)
    with op.batch_alter_table("audit_anchors") as anchors:
        anchors.drop_column("mac")
        anchors.drop_column("key_id")
    with op.batch_alter_table("audit_records") as records:
        records.drop_column("key_id")
