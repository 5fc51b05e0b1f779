"""The thread's message window: new messages in (within the limits), the oldest out.

A thread keeps its newest messages only (`THREAD_WINDOW_BYTES`); when a run leaves more,
the oldest go to the store's transcript archive by an activity, a batch at a time, and
leave the state only once written (`archived` counts them). The events of runs leaving the
log at continue-as-new go there too (a join reads them). The limits refuse what could
never be stored before anything changes: a run is refused, never a thread lost.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.workflows.contract import (
        ARCHIVE_EVENTS_ACTIVITY,
        ARCHIVE_MESSAGES_ACTIVITY,
        MAX_MESSAGE_BYTES,
        MAX_RUN_MESSAGES_BYTES,
        MAX_WINDOW_BYTES,
        THREAD_WINDOW_BYTES,
        ArchiveEvents,
        ArchiveMessages,
        ErrorCode,
        RunRejection,
        WireDict,
        json_size,
    )
    from ag_ui_temporal.workflows.contract.transcript import ARCHIVE_BATCH_BYTES, LOG_TAIL_BYTES
    from ag_ui_temporal.workflows.thread.state import RunRecord, ThreadState

from ag_ui_temporal.workflows.thread import _interrupt_archive
from ag_ui_temporal.workflows.thread._log import RUNS_KEPT, ThreadLog

ARCHIVE_TIMEOUT = timedelta(seconds=30)
ARCHIVE_RETRY = RetryPolicy(maximum_interval=timedelta(seconds=10), maximum_attempts=6)
"""About a minute of attempts; then the window keeps the messages and the next run (or
continue-as-new) tries again. `MAX_WINDOW_BYTES` bounds the window meanwhile."""
BATCH_MESSAGES = 1_000
"""Most messages one archive activity carries (the store appends at most this many)."""


def unseen(state: ThreadState, messages: list[WireDict]) -> list[WireDict]:
    """The client's messages the thread has not seen. Once some are archived, a client that
    re-sends its transcript re-sends messages the window no longer holds: everything up to
    the last message the window knows is old."""
    known = {message.get("id") for message in state.messages}
    if state.archived:
        last = max((i for i, m in enumerate(messages) if m.get("id") in known), default=-1)
        messages = messages[last + 1 :]
    return [message for message in messages if message.get("id") not in known]


def refusal(state: ThreadState, messages: list[WireDict]) -> RunRejection | None:
    """Why the run's new messages cannot be stored, if they cannot."""
    sizes = [json_size(m) for m in unseen(state, messages) if m.get("role") == "user"]
    if any(size > MAX_MESSAGE_BYTES for size in sizes):
        problem = f"a message over {MAX_MESSAGE_BYTES} bytes of JSON (MAX_MESSAGE_BYTES)"
    elif sum(sizes) > MAX_RUN_MESSAGES_BYTES:
        problem = f"new messages over {MAX_RUN_MESSAGES_BYTES} bytes (MAX_RUN_MESSAGES_BYTES)"
    elif sizes and window_bytes(state) + sum(sizes) > MAX_WINDOW_BYTES:
        problem = "the thread cannot store more messages until its archive is written; retry"
    else:
        return None
    return RunRejection(code=ErrorCode.LIMIT_EXCEEDED, message=f"refused: {problem}")


def window_bytes(state: ThreadState) -> int:
    return sum(json_size(message) for message in state.messages)


def overflow(state: ThreadState) -> int:
    """How many of the oldest messages to archive: none while the window is within
    `THREAD_WINDOW_BYTES`, else enough to bring it to half of that."""
    sizes = [json_size(message) for message in state.messages]
    total, count = sum(sizes), 0
    if total <= THREAD_WINDOW_BYTES:
        return 0
    while total > THREAD_WINDOW_BYTES // 2:
        total, count = total - sizes[count], count + 1
    return count


def chunks(items: list[WireDict]) -> list[list[WireDict]]:
    """`items` in activity-sized batches (`ARCHIVE_BATCH_BYTES`, `BATCH_MESSAGES`)."""
    result: list[list[WireDict]] = []
    size = 0
    for item in items:
        item_size = json_size(item)
        full = result and (
            size + item_size > ARCHIVE_BATCH_BYTES or len(result[-1]) >= BATCH_MESSAGES
        )
        if not result or full:
            result.append([])
            size = 0
        result[-1].append(item)
        size += item_size
    return result


def batches(state: ThreadState, count: int) -> list[ArchiveMessages]:
    """The oldest `count` messages, in activity-sized batches."""
    result, seq = [], state.archived
    for chunk in chunks(state.messages[:count]):
        result.append(ArchiveMessages(thread_id=state.thread_id, first_seq=seq, messages=chunk))
        seq += len(chunk)
    return result


def _events_of(state: ThreadState, run: RunRecord) -> list[WireDict]:
    """A finished run's events the log still holds."""
    if not run.finished:
        return []
    first = max(run.first_offset - state.events_start, 0)
    return state.events[first : run.last_offset - state.events_start + 1]


def runs_kept(state: ThreadState) -> int:
    """How many of the latest runs continue-as-new keeps: `RUNS_KEPT`, fewer (at least one)
    when their events weigh more than `LOG_TAIL_BYTES`."""
    size, keep = 0, 0
    for run in reversed(state.runs[-RUNS_KEPT:]):
        size += sum(json_size(event) for event in _events_of(state, run))
        if keep and size > LOG_TAIL_BYTES:
            break
        keep += 1
    return keep


def leaving_events(state: ThreadState) -> list[ArchiveEvents]:
    """The events of the runs continue-as-new will drop (all but `runs_kept`)."""
    result = []
    for run in state.runs[: max(len(state.runs) - runs_kept(state), 0)]:
        first = max(run.first_offset, state.events_start)
        for chunk in chunks(_events_of(state, run)):
            result.append(
                ArchiveEvents(
                    thread_id=state.thread_id, run_id=run.run_id, first_offset=first, events=chunk
                )
            )
            first += len(chunk)
    return result


async def archive_leaving_events(state: ThreadState) -> bool:
    """Archive the events continue-as-new drops (those not written stay unjoinable);
    False when some were not written."""
    for batch in leaving_events(state):
        try:
            await workflow.execute_activity(
                ARCHIVE_EVENTS_ACTIVITY,
                batch,
                start_to_close_timeout=ARCHIVE_TIMEOUT,
                retry_policy=ARCHIVE_RETRY,
            )
        except ActivityError as err:
            workflow.logger.warning("thread %s: events not archived: %s", state.thread_id, err)
            return False
    return True


async def archive_overflow(state: ThreadState) -> bool:
    """Archive what the window holds beyond its budget; each batch leaves the state once
    written. False when the archive could not be written (it is tried again later)."""
    for batch in batches(state, overflow(state)):
        try:
            await workflow.execute_activity(
                ARCHIVE_MESSAGES_ACTIVITY,
                batch,
                start_to_close_timeout=ARCHIVE_TIMEOUT,
                retry_policy=ARCHIVE_RETRY,
            )
        except ActivityError as err:
            workflow.logger.warning("thread %s: archive not written: %s", state.thread_id, err)
            return False
        del state.messages[: len(batch.messages)]
        state.archived += len(batch.messages)
    return True


async def archive_before_continuing(log: ThreadLog, lock: asyncio.Lock) -> None:
    """Archive what continue-as-new would drop or carry beyond the budget (the window's
    overflow, the leaving runs' events and answered interrupts); return once no run goes
    on. An archive that cannot be written now leaves the window as it is
    (`MAX_WINDOW_BYTES` bounds it)."""
    while overflow(log.state) or leaving_events(log.state):
        async with lock:
            written = await archive_overflow(log.state)
            keep = runs_kept(log.state)
            if await archive_leaving_events(log.state):  # a replay needs the run's events
                await _interrupt_archive.archive_leaving(log, keep, ARCHIVE_TIMEOUT, ARCHIVE_RETRY)
            log.trim(keep)
        await workflow.wait_condition(
            lambda: workflow.all_handlers_finished() and not lock.locked()
        )
        if not written:
            return
