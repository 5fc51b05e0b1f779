"""What each channel was told (`notifications`), and which decision links were used.

A notice (`workflows.contract.notices.Notice`) is delivered by an activity that Temporal
retries, on whichever worker: a channel's row says it was sent, so a retry sends only on
the channels that failed. `UsedLinks` makes a signed decision link single-use across every
gateway replica.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from ag_ui_temporal.store._insert import insert_if_absent
from ag_ui_temporal.store.tables import notifications, used_links

DeliveryStatus = Literal["sent", "failed"]
MAX_ERROR = 500
"""The longest error text kept per channel."""
MAX_LISTED = 1_000
"""The most deliveries one read returns."""


@dataclass(frozen=True)
class Delivery:
    """One notice on one channel."""

    key: str
    channel: str
    kind: str
    principal: str
    interrupt_id: str | None
    thread_id: str
    chain_id: str | None
    status: DeliveryStatus
    attempts: int
    error: str | None
    updated_at: datetime

    def view(self) -> dict[str, Any]:
        """As the chain's view shows it (JSON)."""
        return {
            "channel": self.channel,
            "kind": self.kind,
            "principal": self.principal,
            "interruptId": self.interrupt_id,
            "status": self.status,
            "attempts": self.attempts,
            "error": self.error,
            "at": self.updated_at.isoformat(),
        }


class NotificationLog:
    """The `notifications` table: one row per (notice key, channel)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def sent(self, key: str, channel: str) -> bool:
        """Whether this channel has delivered this notice already."""
        query = sa.select(notifications.c.status).where(
            notifications.c.key == key, notifications.c.channel == channel
        )
        async with self.engine.connect() as db:
            status = (await db.execute(query)).scalar_one_or_none()
        return status == "sent"

    async def record(
        self,
        *,
        key: str,
        channel: str,
        kind: str,
        principal: str,
        thread_id: str,
        interrupt_id: str | None,
        chain_id: str | None,
        status: DeliveryStatus,
        error: str | None = None,
    ) -> None:
        """One attempt's outcome: the row is created by the first, counted up by the next."""
        now = datetime.now(UTC)
        row = {
            "key": key,
            "channel": channel,
            "kind": kind,
            "principal": principal,
            "interrupt_id": interrupt_id,
            "thread_id": thread_id,
            "chain_id": chain_id,
            "status": status,
            "attempts": 1,
            "error": None if error is None else error[:MAX_ERROR],
            "updated_at": now,
        }
        async with self.engine.begin() as db:
            insert = insert_if_absent(self.engine, notifications)
            if (await db.execute(insert, row)).rowcount == 1:
                return
            await db.execute(
                sa.update(notifications)
                .where(notifications.c.key == key, notifications.c.channel == channel)
                .where(notifications.c.status != "sent")  # a sent row stays as it was
                .values(
                    status=status,
                    error=row["error"],
                    attempts=notifications.c.attempts + 1,
                    updated_at=now,
                )
            )

    async def for_chain(self, chain_id: str) -> list[Delivery]:
        """A chain's deliveries, oldest first."""
        return await self._read(notifications.c.chain_id == chain_id)

    async def for_principal(self, principal: str) -> list[Delivery]:
        """What was sent to one principal, oldest first."""
        return await self._read(notifications.c.principal == principal)

    async def _read(self, where: sa.ColumnElement[bool]) -> list[Delivery]:
        columns = [notifications.c[name] for name in Delivery.__dataclass_fields__]
        query = (
            sa.select(*columns)
            .where(where)
            .order_by(notifications.c.created_at, notifications.c.key, notifications.c.channel)
            .limit(MAX_LISTED)
        )
        async with self.engine.connect() as db:
            rows = (await db.execute(query)).all()
        return [Delivery(*row) for row in rows]


class UsedLinks:
    """The `used_links` table: a decision link's `jti` once it decided (or is deciding)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def claim(self, jti: str, principal: str, interrupt_id: str) -> bool:
        """Take the link for this use; False if it was used (or is being used) already."""
        row = {"jti": jti, "principal": principal, "interrupt_id": interrupt_id}
        async with self.engine.begin() as db:
            insert = insert_if_absent(self.engine, used_links)
            return bool((await db.execute(insert, row)).rowcount == 1)

    async def release(self, jti: str) -> None:
        """Give a claimed link back: its decision did not reach the thread (Temporal was
        unreachable), so the person may try again."""
        async with self.engine.begin() as db:
            await db.execute(sa.delete(used_links).where(used_links.c.jti == jti))
