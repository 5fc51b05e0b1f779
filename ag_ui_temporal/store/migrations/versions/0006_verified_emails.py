"""Forget the email addresses remembered from sign-in tokens (`people.email`): they were
taken from any token's `email` claim, verified or not, so one may be someone else's address
that a token's holder named. From now on only verified addresses are remembered
(`gateway.auth`); each person's is learned again at their next sign-in. Names are kept.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    people = sa.table("people", sa.column("email", sa.Text))
    op.execute(sa.update(people).where(people.c.email.is_not(None)).values(email=None))


def downgrade() -> None:
    pass  # the addresses are gone; they come back from verified tokens
