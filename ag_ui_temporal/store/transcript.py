"""The transcript archive: a thread's messages by position, its AG-UI events by offset, and
its answered interrupts that left the thread's state (for repeated resumes) by id.

Written by an activity, so every append is idempotent: a retried attempt re-appends the
same rows and changes nothing. Read back in bounded pages, newest first, for hydrate
(TanStack's `page.cursor` / `loadOlderMessages()`), snapshots and the agent's context.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from ag_ui_temporal.store._insert import insert_if_absent
from ag_ui_temporal.store.tables import events, messages, settled_interrupts

MAX_PAGE = 500
"""The most messages one `Transcript.page` returns."""
MAX_EVENTS = 5_000
"""The most events one `Transcript.events_between` returns."""
MAX_APPEND = 1_000
"""The most messages or events one append stores (an activity archives a window at a time)."""


class TranscriptConflict(Exception):
    """An append found other messages at the same positions: the caller's numbering is wrong."""


@dataclass(frozen=True)
class MessagePage:
    """Messages of one thread, oldest first, ending just before the previous page."""

    messages: list[dict[str, Any]]
    """The AG-UI messages, in transcript order."""
    first_seq: int | None
    """The position of `messages[0]` (None for an empty page)."""
    cursor: int | None
    """`before_seq` for the next (older) page; None once the page holds the first message."""


@dataclass(frozen=True)
class ArchivedEvent:
    """One AG-UI event of a thread's log."""

    offset: int
    """Its position in the thread's event log."""
    run_id: str
    """The run that emitted it."""
    event: dict[str, Any]
    """The event, as sent on the wire."""


class Transcript:
    """The `messages`, `events` and `settled_interrupts` tables."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def append_messages(
        self, thread_id: str, batch: Sequence[Mapping[str, Any]], first_seq: int
    ) -> None:
        """Store AG-UI messages (each with `id` and `role`) at `first_seq`, `first_seq + 1`, ...

        Positions already holding the same message are left as they are; a position or a
        message id already holding another raises `TranscriptConflict` (nothing is written).
        """
        rows = [
            {"thread_id": thread_id, "seq": first_seq + i, "message_id": m["id"],
             "role": m["role"], "body": dict(m)}
            for i, m in enumerate(batch)
        ]  # fmt: skip
        if not rows:
            return
        _check_size(rows)
        async with self.engine.begin() as db:
            await db.execute(insert_if_absent(self.engine, messages), rows)
            await _check_positions(db, thread_id, rows)

    async def positions(self, thread_id: str, message_ids: Sequence[str]) -> dict[str, int]:
        """Where the thread stores each of `message_ids` (the ids it holds)."""
        query = sa.select(messages.c.message_id, messages.c.seq).where(
            messages.c.thread_id == thread_id, messages.c.message_id.in_(list(message_ids))
        )
        async with self.engine.connect() as db:
            return {message_id: seq for message_id, seq in await db.execute(query)}

    async def count(self, thread_id: str) -> int:
        """How many messages the thread has archived."""
        query = sa.select(sa.func.count()).where(messages.c.thread_id == thread_id)
        async with self.engine.connect() as db:
            return int(await db.scalar(query) or 0)

    async def page(self, thread_id: str, limit: int, before_seq: int | None = None) -> MessagePage:
        """The newest `limit` messages before `before_seq` (the newest of all without it)."""
        if not 1 <= limit <= MAX_PAGE:
            raise ValueError(f"page limit must be 1..{MAX_PAGE}, not {limit}")
        query = sa.select(messages.c.seq, messages.c.body).where(messages.c.thread_id == thread_id)
        if before_seq is not None:
            query = query.where(messages.c.seq < before_seq)
        query = query.order_by(messages.c.seq.desc()).limit(limit + 1)
        async with self.engine.connect() as db:
            rows = (await db.execute(query)).all()
        older, rows = len(rows) > limit, list(reversed(rows[:limit]))
        first_seq = rows[0].seq if rows else None
        return MessagePage(
            messages=[row.body for row in rows],
            first_seq=first_seq,
            cursor=first_seq if older else None,
        )

    async def append_events(
        self, thread_id: str, run_id: str, batch: Sequence[Mapping[str, Any]], first_offset: int
    ) -> None:
        """Store one run's events at `first_offset`, `first_offset + 1`, ...; offsets already
        stored are left as they are (a retried append is a no-op)."""
        rows = [
            {"thread_id": thread_id, "offset": first_offset + i, "run_id": run_id, "event": dict(e)}
            for i, e in enumerate(batch)
        ]
        if rows:
            _check_size(rows)
            async with self.engine.begin() as db:
                await db.execute(insert_if_absent(self.engine, events), rows)

    async def run_events(self, thread_id: str, run_id: str) -> list[ArchivedEvent]:
        """One run's events, in order (at most `MAX_EVENTS`)."""
        query = (
            sa.select(events.c.offset, events.c.run_id, events.c.event)
            .where(events.c.thread_id == thread_id, events.c.run_id == run_id)
            .order_by(events.c.offset)
            .limit(MAX_EVENTS)
        )
        async with self.engine.connect() as db:
            rows = (await db.execute(query)).all()
        return [ArchivedEvent(offset=o, run_id=r, event=e) for o, r, e in rows]

    async def events_between(self, thread_id: str, first: int, last: int) -> list[ArchivedEvent]:
        """The thread's events at offsets `first` (included) to `last` (excluded), in order."""
        if not 0 <= last - first <= MAX_EVENTS:
            raise ValueError(f"events_between reads 0..{MAX_EVENTS} events, not {last - first}")
        query = (
            sa.select(events.c.offset, events.c.run_id, events.c.event)
            .where(events.c.thread_id == thread_id)
            .where(events.c.offset >= first, events.c.offset < last)
            .order_by(events.c.offset)
        )
        async with self.engine.connect() as db:
            rows = (await db.execute(query)).all()
        return [ArchivedEvent(offset=o, run_id=r, event=e) for o, r, e in rows]

    async def append_interrupts(self, thread_id: str, batch: Sequence[Mapping[str, Any]]) -> None:
        """Store answered interrupts that left the thread's state (each a mapping of the
        `settled_interrupts` columns but `thread_id`); one already stored is left as it is."""
        rows = [{**dict(row), "thread_id": thread_id} for row in batch]
        if rows:
            _check_size(rows)
            async with self.engine.begin() as db:
                await db.execute(insert_if_absent(self.engine, settled_interrupts), rows)

    async def settled(self, thread_id: str, interrupt_ids: Sequence[str]) -> list[dict[str, Any]]:
        """The stored interrupts of the thread among `interrupt_ids` (columns by name, but
        `thread_id` and `created_at`)."""
        table = settled_interrupts
        columns = [c for c in table.c if c.name not in ("thread_id", "created_at")]
        query = sa.select(*columns).where(
            table.c.thread_id == thread_id, table.c.interrupt_id.in_(list(interrupt_ids))
        )
        async with self.engine.connect() as db:
            return [dict(row._mapping) for row in await db.execute(query)]


def _check_size(rows: list[dict[str, Any]]) -> None:
    if len(rows) > MAX_APPEND:
        raise ValueError(f"one append stores at most {MAX_APPEND} rows, not {len(rows)}")


async def _check_positions(db: AsyncConnection, thread_id: str, rows: list[dict[str, Any]]) -> None:
    """Every row's position holds its message, and its message id its position (else roll back)."""
    first, last = rows[0]["seq"], rows[-1]["seq"]
    ids = [row["message_id"] for row in rows]
    query = sa.select(messages.c.seq, messages.c.message_id).where(
        messages.c.thread_id == thread_id,
        sa.or_(messages.c.seq.between(first, last), messages.c.message_id.in_(ids)),
    )
    stored = {(seq, message_id) for seq, message_id in await db.execute(query)}
    wanted = {(row["seq"], row["message_id"]) for row in rows}
    if stored != wanted:
        raise TranscriptConflict(f"thread {thread_id}: {first}..{last} hold other messages")
