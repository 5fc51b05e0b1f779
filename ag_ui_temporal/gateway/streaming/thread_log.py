"""Reading the thread's event log from the gateway.

The workflow appends each event to the thread's log; the gateway reads a
run's slice with the `run_events` query (reading writes no history). Every
event keeps its log offset, which becomes its SSE `id`, so a client that
reconnects with `Last-Event-ID` gets exactly what it missed, from any replica.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, TypeVar

from temporalio.client import Client, WorkflowHandle, WorkflowQueryFailedError
from temporalio.service import RPCError, RPCStatusCode

from ag_ui_temporal.workflows.contract import (
    RUN_EVENTS_QUERY,
    RUN_IDS,
    THREAD_QUERY,
    RunEventsPage,
    RunEventsQuery,
    ThreadView,
    WireDict,
    filled_marker,
    is_unfilled_marker,
    run_update_id,
    thread_workflow_id,
)
from ag_ui_temporal.workflows.contract.names import MAX_RUN_ID_BYTES, indexed_size

TERMINAL = ("RUN_FINISHED", "RUN_ERROR")
T = TypeVar("T")


@dataclass
class Offset:
    """An event with its place in the thread's log (`None`: not durable, no SSE id)."""

    event: WireDict
    offset: int | None


Batch = list[Offset]
"""Events ready together (a finished run's result, a page of its log): the SSE writer sends
each batch in one write, so a quick run reaches the client in one chunk."""


async def read_run(
    handle: WorkflowHandle[Any, Any], run_id: str, after: int, brings: str | None = None
) -> RunEventsPage:
    """The run's events after `after`: the run sent as `run_id` with `brings` (the POST's own,
    `run_digest`), or the newest sent as `run_id` (None: a join). Not found while its thread
    does not exist (yet), or that run has not begun."""
    query = RunEventsQuery(run_id=run_id, after=after, brings=brings)
    try:
        page: RunEventsPage = await handle.query(RUN_EVENTS_QUERY, query, result_type=RunEventsPage)
        return page
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            return RunEventsPage(found=False)
        raise
    except WorkflowQueryFailedError as err:
        # The worker could not answer this time (the fault harness saw a restarted worker
        # fail a query while replaying the thread): as transient as Temporal not answering,
        # so handled the same way (`UNAVAILABLE`, 503, the client re-attaches), never a 500.
        message = f"the thread's log could not be read: {err}"
        raise RPCError(message, RPCStatusCode.UNAVAILABLE, b"") from err


async def with_window(handle: WorkflowHandle[Any, Any], batch: Batch) -> Batch:
    """`batch` with each unfilled `MESSAGES_SNAPSHOT` marker filled with the thread's window
    as it is now (one `thread` query, only when there is one): a run read back from the
    archive, or a run's result the gateway asked for without it (`fill_snapshots`)."""
    if not any(is_unfilled_marker(item.event) for item in batch):
        return batch
    view: ThreadView = await handle.query(THREAD_QUERY, result_type=ThreadView)
    window, archived = view.messages, view.archived
    return [
        Offset(filled_marker(i.event, window, archived, view.thread_id), i.offset)
        if is_unfilled_marker(i.event)
        else i
        for i in batch
    ]


def run_outcome(
    handle: WorkflowHandle[Any, Any], run_id: str, brings: str | None
) -> asyncio.Future[Any]:
    """The run update's outcome, awaited on the server (no history is written). It fails
    at once for a run no update of that id sent (the thread's own run; one an older gateway
    sent while its thread recorded what it brought): its reader then polls."""
    return unobserved(handle.get_update_handle(run_update_id(run_id, brings)).result())


def unobserved(awaitable: Awaitable[T]) -> asyncio.Future[T]:
    """A future whose failure nobody may read (a client left): do not log it as lost."""
    future = asyncio.ensure_future(awaitable)
    future.add_done_callback(lambda done: done.cancelled() or done.exception())
    return future


SPLICEABLE = re.compile(r"[\w.:@+=/~-]+")
"""Run ids `find_thread` looks up: letters, digits and a few separators (TanStack's are
`run-<ms>-<base36>`, others UUIDs). Nothing else is spliced into a visibility query: a quote
or a backslash would end or escape its string, and the dev server's SQLite visibility fails
(and is retried for seconds) on a `"` or a NUL within one."""


async def find_thread(client: Client, run_id: str) -> str | None:
    """The workflow id of the thread that ran `run_id`, from the `AguiRunIds` attribute
    (None for an id no run can have, or one the visibility store refuses to look up)."""
    if not SPLICEABLE.fullmatch(run_id) or indexed_size(run_id) > MAX_RUN_ID_BYTES:
        return None
    try:
        async for execution in client.list_workflows(f"{RUN_IDS.name} = '{run_id}'", limit=1):
            return execution.id
    except RPCError as err:
        if err.status != RPCStatusCode.INVALID_ARGUMENT:
            raise
    return None


def thread_handle(client: Client, thread_id: str) -> WorkflowHandle[Any, Any]:
    """The handle of thread `thread_id`'s workflow (whether or not it exists yet)."""
    return client.get_workflow_handle(thread_workflow_id(thread_id))
