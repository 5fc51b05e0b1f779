"""Who people are, as their sign-in tokens said (`people`): an email address and a name.

The gateway (`AUTH_MODE=jwt`) remembers a token's email claim here when the token says the
address is verified (`gateway.auth`), and its name claim, so that a notification reaches
someone the directory file (`DIRECTORY_FILE`) does not list. The
directory's own entry always wins (`notify.directory.People`).

`usable_email` and `usable_name` are the one rule for what may become a mail header, for
the directory file and for tokens alike: values come from outside, and a CR or LF in a
header would let its writer add headers (or recipients) of their own.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from ag_ui_temporal.store._insert import insert_if_absent
from ag_ui_temporal.store.tables import people

MAX_EMAIL = 320
"""The longest address (RFC 3696's 64 + 1 + 255)."""
MAX_NAME = 200
"""The longest name kept."""
MAX_PRINCIPAL = 500
"""The longest principal remembered (a longer one is not a person's name)."""

# One `@` between two runs of characters that are neither space (CR and LF included) nor
# what would end or split an address in a header. Two disjoint classes: linear, no backtracking.
_EMAIL = re.compile(r"[^@\s<>()\[\]\\,;:\"]+@[^@\s<>()\[\]\\,;:\"]+")


def usable_email(value: str) -> bool:
    """Loosely an address: exactly one `@` with something on both sides, no whitespace
    (so no CR/LF), nothing that ends or splits an address in a header, and not too long."""
    return len(value) <= MAX_EMAIL and _EMAIL.fullmatch(value) is not None


def usable_name(value: str) -> bool:
    """A display name: not blank, not too long, and no control characters (CR/LF)."""
    return (
        0 < len(value) <= MAX_NAME
        and bool(value.strip())
        and not any(ord(c) < 32 or ord(c) == 127 for c in value)
    )


class KnownPeople:
    """The `people` table: one row per principal, the latest values their tokens carried."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def remember(self, principal: str, email: str | None, name: str | None = None) -> None:
        """Insert the principal's email and name, or update those that changed. A value that
        is not usable (`usable_email`, `usable_name`) is left out; an absent one is kept as
        it was."""
        email = email.strip() if email is not None and usable_email(email.strip()) else None
        name = name.strip() if name is not None and usable_name(name.strip()) else None
        if not principal or len(principal) > MAX_PRINCIPAL or (email is None and name is None):
            return
        now = datetime.now(UTC)
        row = {"principal": principal, "email": email, "name": name, "updated_at": now}
        changes = {key: value for key, value in (("email", email), ("name", name)) if value}
        async with self.engine.begin() as db:
            if (await db.execute(insert_if_absent(self.engine, people), row)).rowcount == 1:
                return
            await db.execute(
                sa.update(people)
                .where(people.c.principal == principal)
                .where(sa.or_(*(people.c[key].is_distinct_from(v) for key, v in changes.items())))
                .values(**changes, updated_at=now)
            )

    async def get(self, principal: str) -> tuple[str | None, str | None] | None:
        """The principal's `(email, name)`, or None when no token ever named them."""
        query = sa.select(people.c.email, people.c.name).where(people.c.principal == principal)
        async with self.engine.connect() as db:
            row = (await db.execute(query)).one_or_none()
        return None if row is None else (row.email, row.name)
