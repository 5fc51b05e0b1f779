"""The outbox: each tool effect recorded once per idempotency key, shared by every worker.

Temporal runs an activity once per workflow decision but retries it after a crash or a
timeout, possibly on another worker. A tool records its effect under the key (the AG-UI
`toolCallId`) in this table; a retried attempt, on any worker sharing the database, finds
the first attempt's row and returns its result instead of acting again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from ag_ui_temporal.store._insert import insert_if_absent
from ag_ui_temporal.store.tables import effects

MAX_EFFECTS = 10_000
"""The most effects one `Outbox.effects` read returns (it is for tests and operators)."""


@dataclass(frozen=True)
class Recorded:
    """What the outbox holds for a key after `record`."""

    result: dict[str, Any]
    """The result stored by the first attempt (this attempt's own when `first_time`)."""
    first_time: bool
    """False when the key had been recorded before: a retried or repeated attempt."""


class Outbox:
    """The `effects` table: one row per idempotency key."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def record(
        self, key: str, tool: str, args: dict[str, Any], result: dict[str, Any]
    ) -> Recorded:
        """Write the effect unless its key exists; return the stored result either way."""
        row = {"key": key, "tool": tool, "args": args, "result": result}
        async with self.engine.begin() as db:
            inserted = (await db.execute(insert_if_absent(self.engine, effects), row)).rowcount
            if inserted == 1:  # the first attempt: what it stored is its own result
                return Recorded(result=result, first_time=True)
            query = sa.select(effects.c.result).where(effects.c.key == key)
            stored = (await db.execute(query)).scalar_one()
        return Recorded(result=stored, first_time=False)

    async def effects(self, tool: str | None = None) -> list[dict[str, Any]]:
        """Recorded effects (key, tool, args), oldest first, at most `MAX_EFFECTS`."""
        query = sa.select(effects.c.key, effects.c.tool, effects.c.args)
        if tool is not None:
            query = query.where(effects.c.tool == tool)
        query = query.order_by(effects.c.created_at, effects.c.key).limit(MAX_EFFECTS)
        async with self.engine.connect() as db:
            rows = (await db.execute(query)).all()
        return [{"key": key, "tool": name, "args": args} for key, name, args in rows]
