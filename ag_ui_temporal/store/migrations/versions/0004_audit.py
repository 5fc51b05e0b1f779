"""The audit trail: its records (`audit_records`, a hash chain per scope), who may read each
scope (`audit_readers`) and where a pruned trail now starts (`audit_anchors`).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "audit_records",
        sa.Column(
            "id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True,
            autoincrement=True,
        ),
        sa.Column("scope", sa.Text, nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("key", sa.Text, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("at", sa.Text, nullable=False),
        sa.Column("occurred_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("thread_id", sa.Text, nullable=True),
        sa.Column("chain_id", sa.Text, nullable=True),
        sa.Column("interrupt_id", sa.Text, nullable=True),
        sa.Column("run_id", sa.Text, nullable=True),
        sa.Column("principal", sa.Text, nullable=True),
        sa.Column("data", sa.JSON, nullable=False),
        sa.Column("prev", sa.Text, nullable=False),
        sa.Column("hash", sa.Text, nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("key", name="uq_audit_records_key"),
        sa.UniqueConstraint("scope", "seq", name="uq_audit_records_scope_seq"),
        sqlite_autoincrement=True,
    )  # fmt: skip
    for column in ("occurred_at", "thread_id", "chain_id", "principal"):
        op.create_index(f"ix_audit_records_{column}", "audit_records", [column])
    op.create_index("ix_audit_records_recorded_at", "audit_records", ["recorded_at", "id"])
    op.create_table(
        "audit_readers",
        sa.Column("scope", sa.Text, primary_key=True),
        sa.Column("principal", sa.Text, primary_key=True),
    )
    op.create_index("ix_audit_readers_principal", "audit_readers", ["principal"])
    op.create_table(
        "audit_anchors",
        sa.Column("scope", sa.Text, primary_key=True),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("hash", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("audit_anchors")
    op.drop_index("ix_audit_readers_principal", table_name="audit_readers")
    op.drop_table("audit_readers")
    op.drop_index("ix_audit_records_recorded_at", table_name="audit_records")
    for column in ("principal", "chain_id", "thread_id", "occurred_at"):
        op.drop_index(f"ix_audit_records_{column}", table_name="audit_records")
    op.drop_table("audit_records")
