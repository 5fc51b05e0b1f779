"""The two ways a client gets a run's events, as batches for the SSE writer (`sse.py`).

- `run_stream`: the client that sent the run (`POST`). The run's update is already on
  its way (`gateway/runs.py` sends it and maps refusals); a run that ends within
  `QUICK_RUN` is sent from its result, a longer one is followed in the thread's log
  meanwhile (`feeds.py`), then finished from its result.
- `join_stream`: a client joining a run (`GET ?runId=`): the run's log from an offset;
  `archived_stream` for a run whose events left the log (`archived.py`).

Either way every `RUN_FINISHED` carries TanStack's interrupt bindings (`gateway.tanstack`) and
every `MESSAGES_SNAPSHOT` the transcript the caller's `Snapshots` builds (`snapshots.py`: a
run's carries the archive's newest messages too, a join's the window alone).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

from temporalio.client import WorkflowHandle

from ag_ui_temporal.gateway.streaming.feeds import RunFeeds
from ag_ui_temporal.gateway.streaming.snapshots import Snapshots
from ag_ui_temporal.gateway.streaming.thread_log import TERMINAL, Batch, Offset, with_window
from ag_ui_temporal.gateway.tanstack import bind_run_finished
from ag_ui_temporal.workflows.contract import RunResult

QUICK_RUN = 0.1
"""Seconds to wait for the result of a run still going once accepted (one waiting for a
quick tool) before following its log."""


class ForeignRun(Exception):
    """The run's result is another principal's (its run id was re-sent by someone else)."""


async def run_stream(
    feeds: RunFeeds,
    handle: WorkflowHandle[Any, Any],
    run_id: str,
    after: int,
    result: asyncio.Future[RunResult],
    may_see: Callable[[str | None], bool],
    snapshots: Snapshots,
    brings: str | None = None,
) -> AsyncIterator[Batch]:
    """The run's events after offset `after`, up to its terminal event (the run this POST,
    which brought `brings`, sent: a continuation's own, never the run it continues).

    Raises what `result` (the accepted update's outcome) raises, what reading the log
    raises, and `ForeignRun` when `may_see` refuses the result's owner.
    """
    await asyncio.wait([result], timeout=QUICK_RUN)
    if not result.done():
        # only the thread's owner reads its log; anyone else waits for the run's own
        # answer (FORBIDDEN), so a run id re-sent by another principal shows nothing
        following = feeds.follow(
            handle, run_id, after, run_done=result, may_see=may_see, brings=brings
        )
        async for item in following:
            yield [await _ready(item, snapshots)]
            after = item.offset if item.offset is not None else after
            if item.event["type"] in TERMINAL:
                return
    outcome = await result
    if not may_see(outcome.owner):  # another's run id, answered from Temporal's store
        raise ForeignRun
    unsent = await with_window(handle, _unsent(outcome, after))
    yield [await _ready(item, snapshots) for item in unsent]


async def join_stream(
    feeds: RunFeeds,
    handle: WorkflowHandle[Any, Any],
    run_id: str,
    after: int,
    snapshots: Snapshots,
) -> AsyncGenerator[Batch, None]:
    """The run's events after offset `after`, then its live tail (the caller checked access)."""
    async for item in feeds.follow(handle, run_id, after):
        yield [await _ready(item, snapshots)]


async def archived_stream(batch: Batch, snapshots: Snapshots) -> AsyncGenerator[Batch, None]:
    """A run read back from the archive (`archived.py`), as the client gets it."""
    yield [await _ready(item, snapshots) for item in batch]


async def _ready(item: Offset, snapshots: Snapshots) -> Offset:
    """The event as the client gets it: bindings on `RUN_FINISHED`, snapshots whole."""
    return Offset(bind_run_finished(await snapshots.expand(item.event)), item.offset)


def _unsent(outcome: RunResult, after: int) -> Batch:
    """The result's events after offset `after` (all of them for a fresh client)."""
    events = [Offset(e, outcome.first_offset + i) for i, e in enumerate(outcome.events)]
    missed = [item for item in events if item.offset is not None and item.offset > after]
    if not missed and events:
        missed = [Offset(events[-1].event, None)]  # re-attached after the end: finish the client
    return missed
