"""The archive activities: messages leaving a thread's window, events leaving its log and
answered interrupts leaving its state, written to the store.

Idempotent by position (events: by offset; interrupts: by id): a retried attempt (on any
worker sharing the database) re-appends the same rows and changes nothing. A client that
re-sent an already archived message as new (its id known only to the archive) gets that
copy stored under a derived id (`<id>~<position>`), so the archive never refuses the
thread's window.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from temporalio import activity

from ag_ui_temporal.workflows.contract import (
    ARCHIVE_EVENTS_ACTIVITY,
    ARCHIVE_MESSAGES_ACTIVITY,
    ArchiveEvents,
    ArchiveMessages,
    WireDict,
)
from ag_ui_temporal.workflows.contract.replay import ARCHIVE_INTERRUPTS_ACTIVITY, ArchiveInterrupts

if TYPE_CHECKING:  # the sandbox shares the contract only: it must not load SQLAlchemy
    from ag_ui_temporal.store import Transcript


class ArchiveActivities:
    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript

    @activity.defn(name=ARCHIVE_MESSAGES_ACTIVITY)
    async def archive_messages(self, batch: ArchiveMessages) -> None:
        from ag_ui_temporal.store import TranscriptConflict

        try:
            await self.transcript.append_messages(batch.thread_id, batch.messages, batch.first_seq)
        except TranscriptConflict:
            messages = await self._distinct(batch)
            await self.transcript.append_messages(batch.thread_id, messages, batch.first_seq)

    @activity.defn(name=ARCHIVE_EVENTS_ACTIVITY)
    async def archive_events(self, batch: ArchiveEvents) -> None:
        await self.transcript.append_events(
            batch.thread_id, batch.run_id, batch.events, batch.first_offset
        )

    @activity.defn(name=ARCHIVE_INTERRUPTS_ACTIVITY)
    async def archive_interrupts(self, batch: ArchiveInterrupts) -> None:
        rows = [record.model_dump(mode="json") for record in batch.interrupts]
        await self.transcript.append_interrupts(batch.thread_id, rows)

    async def _distinct(self, batch: ArchiveMessages) -> list[WireDict]:
        """The batch, each message whose id the archive holds elsewhere under a derived id."""
        ids = [str(m["id"]) for m in batch.messages]
        stored = await self.transcript.positions(batch.thread_id, ids)
        result = []
        for seq, message in enumerate(batch.messages, start=batch.first_seq):
            if stored.get(str(message["id"]), seq) != seq:
                message = {**message, "id": f"{message['id']}~{seq}"}
            result.append(message)
        return result
