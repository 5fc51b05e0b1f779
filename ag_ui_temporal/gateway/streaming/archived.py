"""A run whose events left the thread's log: read back from the store's archive.

A thread keeps the events of its last 20 runs; at continue-as-new the events of older
runs are written to the store (`agui_archive_events`), where a join that names the
thread (`?runId=R&threadId=T`) finds them. Such a run is over: its events come in one
batch, its `MESSAGES_SNAPSHOT` marker filled with the thread's transcript as it is now.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ag_ui_temporal.gateway.streaming.thread_log import Batch, Offset, with_window

if TYPE_CHECKING:
    from temporalio.client import WorkflowHandle

    from ag_ui_temporal.store import Transcript


async def archived_run(
    transcript: Transcript,
    handle: WorkflowHandle[Any, Any],
    thread_id: str,
    run_id: str,
    after: int,
) -> Batch | None:
    """The run's archived events after offset `after` (None: the archive has no such run).
    A client that has them all gets the terminal event again, without an id."""
    stored = await transcript.run_events(thread_id, run_id)
    if not stored:
        return None
    batch = [Offset(item.event, item.offset) for item in stored if item.offset > after]
    if not batch:
        batch = [Offset(stored[-1].event, None)]
    return await with_window(handle, batch)
