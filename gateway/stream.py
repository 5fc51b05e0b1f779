"""A run's events as they are recorded: follow the thread's event log.

The workflow appends each event to the thread's log; the gateway reads the
run's slice with the `run_events` query (no history is written by reading)
and stops at the terminal event. Every event keeps its log offset, which
becomes its SSE `id`, so a client that reconnects with `Last-Event-ID` gets
exactly what it missed, from any gateway replica.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

from temporalio.client import Client, WorkflowHandle

from workflows.contract import (
    RUN_EVENTS_QUERY,
    RUN_IDS,
    RunEventsPage,
    RunEventsQuery,
    WireDict,
    thread_workflow_id,
)

FIRST_POLL = 0.01
"""Seconds before the first re-read; doubles while nothing new arrives..."""
MAX_POLL = 0.25
"""...up to this. Keeps a busy run's events flowing and a quiet one cheap."""

TERMINAL = ("RUN_FINISHED", "RUN_ERROR")

FOLLOWERS = 0
"""Runs being followed right now by this process (a client that left must not count)."""


@dataclass
class Offset:
    """An event with its place in the thread's log (`None`: not durable, no SSE id)."""

    event: WireDict
    offset: int | None


async def read_run(handle: WorkflowHandle, run_id: str, after: int) -> RunEventsPage:
    return await handle.query(
        RUN_EVENTS_QUERY, RunEventsQuery(run_id=run_id, after=after), result_type=RunEventsPage
    )


async def follow_run(
    handle: WorkflowHandle,
    run_id: str,
    after: int,
    stop: asyncio.Future[object] | None = None,
) -> AsyncIterator[Offset]:
    """The run's events after offset `after`, as they are recorded, up to its terminal event.

    Returns early, having yielded what it read, when `stop` completes first.
    """
    global FOLLOWERS
    FOLLOWERS += 1
    try:
        async for item in _follow(handle, run_id, after, stop):
            yield item
    finally:
        FOLLOWERS -= 1


async def _follow(
    handle: WorkflowHandle,
    run_id: str,
    after: int,
    stop: asyncio.Future[object] | None,
) -> AsyncIterator[Offset]:
    delay = FIRST_POLL
    page = await read_run(handle, run_id, after)
    while True:
        for index, event in enumerate(page.events):
            yield Offset(event, page.first_offset + index)
        if page.events:
            after, delay = page.first_offset + len(page.events) - 1, FIRST_POLL
        if page.finished:
            return
        if stop is not None:
            await asyncio.wait([stop], timeout=delay)
            if stop.done():
                return
        else:
            await asyncio.sleep(delay)
        delay = min(delay * 2, MAX_POLL)
        page = await read_run(handle, run_id, after)


async def find_thread(client: Client, run_id: str) -> str | None:
    """The workflow id of the thread that ran `run_id`, from the `AguiRunIds` attribute."""
    if "'" in run_id or "\\" in run_id:
        return None  # never splice such a string into a visibility query
    async for execution in client.list_workflows(f"{RUN_IDS.name} = '{run_id}'", limit=1):
        return execution.id
    return None


def thread_handle(client: Client, thread_id: str) -> WorkflowHandle:
    return client.get_workflow_handle(thread_workflow_id(thread_id))
