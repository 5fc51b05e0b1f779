"""A run's `MESSAGES_SNAPSHOT`, built when read: the archive's older messages + the window.

The thread logs a marker (`SNAPSHOT_KEY`); its run result and its log pages fill the marker
with the window and how many messages precede it in the store's transcript archive. With
nothing archived (most threads) the snapshot is the window as it comes, without a read;
otherwise the newest archived messages are read back, up to `SNAPSHOT_MAX_BYTES` (older
ones are left to hydrate's `before` pages: TanStack's `loadOlderMessages()`). A join's
snapshot is the window alone (`WINDOW_ONLY`).

Three steps, in three places, because each part lives in one: the marker is in the log the
thread records (so the log never copies the window into history), the window is the
thread's state (read by the thread's result or query, or by a `thread` query: the contract's
`filled_marker` is the one shape either fills), and the archive is in the store, which
workflow code cannot read (a query runs no activity). This module is the only one that
makes a marker a whole `MESSAGES_SNAPSHOT`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ag_ui_temporal.workflows.contract import SNAPSHOT_KEY, WireDict, is_snapshot_marker, json_size

if TYPE_CHECKING:
    from ag_ui_temporal.store import Transcript

PAGE = 500
"""Messages per archive read (the store's most)."""


class Snapshots:
    """Expands snapshot markers, reading the transcript archive when they need it."""

    def __init__(self, transcript: Transcript | None, max_bytes: int) -> None:
        self.transcript, self.max_bytes = transcript, max_bytes

    async def expand(self, event: WireDict) -> WireDict:
        """`event`, a marker made a whole `MESSAGES_SNAPSHOT` (any other event as it is)."""
        if not is_snapshot_marker(event):
            return event
        filled: dict[str, Any] = event[SNAPSHOT_KEY] or {}
        window = list(event.get("messages") or [])
        archived, thread_id = int(filled.get("archived", 0)), filled.get("threadId")
        older = await self.older(str(thread_id), archived) if archived and thread_id else []
        expanded = {key: value for key, value in event.items() if key != SNAPSHOT_KEY}
        return {**expanded, "messages": older + window}

    async def older(self, thread_id: str, archived: int) -> list[WireDict]:
        """The newest archived messages before position `archived`, within the budget."""
        if self.transcript is None:
            return []
        pages: list[list[WireDict]] = []
        budget, cursor = self.max_bytes, archived
        while budget > 0:
            page = await self.transcript.page(thread_id, PAGE, before_seq=cursor)
            kept: list[WireDict] = []
            for message in reversed(page.messages):
                budget -= json_size(message)
                if budget < 0:
                    break
                kept.append(message)
            pages.append(kept[::-1])
            if page.cursor is None:
                break
            cursor = page.cursor
        return [message for page in reversed(pages) for message in page]


WINDOW_ONLY = Snapshots(None, 0)
"""Snapshots for joins: the window as it comes, nothing read from the archive. Anyone who
may see a thread may join its runs as often as they like, and each join carrying the archive
(`SNAPSHOT_MAX_BYTES`) would multiply it; a client that joins has hydrated the window and
pages back from there (hydrate's `before`)."""
