"""The parts of a thread's run that need no workflow instance: new messages in, the
closing events out, a repeated resume's events, the run index, a refusal's error."""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from ag_ui.core import (
        MessagesSnapshotEvent,
        RunErrorEvent,
        RunFinishedEvent,
        RunFinishedInterruptOutcome,
        RunFinishedSuccessOutcome,
        StateSnapshotEvent,
    )

    from ag_ui_temporal.agents.streaming import TOO_MANY_TOOL_CALLS
    from ag_ui_temporal.workflows.contract import (
        DROPPED_RUN,
        DROPPED_RUNS_KEPT,
        RUN_IDS,
        SNAPSHOT_KEY,
        ErrorCode,
        RunEventsPage,
        RunEventsQuery,
        RunRequest,
        RunResult,
        WireDict,
        filled_marker,
        is_snapshot_marker,
        json_size,
    )
    from ag_ui_temporal.workflows.contract.names import MAX_RUN_ID_BYTES, indexed_size
    from ag_ui_temporal.workflows.contract.replay import readdressed
    from ag_ui_temporal.workflows.contract.runs import BRINGS_NOTHING
    from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord
    from ag_ui_temporal.workflows.thread.state import RunRecord, ThreadState

from ag_ui_temporal.workflows.thread import _window
from ag_ui_temporal.workflows.thread._log import RUNS_KEPT, ThreadLog
from ag_ui_temporal.workflows.thread._resume import RunRejected
from ag_ui_temporal.workflows.thread.turn import Turn, message_text


def take_new_messages(state: ThreadState, request: RunRequest) -> str | None:
    """Append client messages the thread has not seen; return the last new user text."""
    known = {message.get("id") for message in state.messages}
    text = None
    for message in _window.unseen(state, request.messages):
        if message.get("id") in known or message.get("role") != "user":
            continue
        state.messages.append(message)
        text = message_text(message)
    return text


def client_results(state: ThreadState, request: RunRequest) -> list[WireDict]:
    """The run's tool messages that answer the agent's calls of the client's own tools
    (calls in the transcript with no result yet and no interrupt of their own, but for an
    approved client tool's: a person approved it, and the client ran it)."""
    results = [
        message
        for message in _window.unseen(state, request.messages)
        if message.get("role") == "tool"
    ]
    if not results:  # most runs: no need to read the transcript
        return []
    calls = {c.get("id") for m in state.messages for c in m.get("toolCalls") or []}
    calls -= {m.get("toolCallId") for m in state.messages if m.get("role") == "tool"}
    # an interrupt's call is the client's only once a person approved it
    calls -= {i.interrupt.get("toolCallId") for i in state.interrupts if not i.handed_to_client}
    taken = []
    for message in results:
        if message.get("toolCallId") in calls:
            calls.discard(message.get("toolCallId"))
            taken.append(message)
    return taken


def emit_finished(turn: Turn, state: ThreadState, awaiting: list[InterruptRecord]) -> None:
    """The snapshots (they make the transcript authoritative for any client, also one that
    joined mid-run and dropped what it had hydrated), then `RUN_FINISHED`. The messages
    snapshot is logged as a marker (`fill_snapshots` fills it when read)."""
    assert turn.run_id is not None
    outcome: RunFinishedInterruptOutcome | RunFinishedSuccessOutcome
    if awaiting:  # wire dicts, validated into ag_ui models as the constructor would
        interrupts = [i.interrupt for i in awaiting]
        outcome = RunFinishedInterruptOutcome.model_validate({"interrupts": interrupts})
    else:
        outcome = RunFinishedSuccessOutcome()
    turn.emit(StateSnapshotEvent(snapshot=state.state))
    turn.emit(MessagesSnapshotEvent.model_validate({"messages": [], SNAPSHOT_KEY: {}}))
    run_id = state.client_run_id(turn.run_id)
    turn.emit(RunFinishedEvent(thread_id=state.thread_id, run_id=run_id, outcome=outcome))


def fill_snapshots(events: list[WireDict], state: ThreadState) -> list[WireDict]:
    """`events` with each snapshot marker holding the window and how many messages precede
    it in the archive (what the gateway needs to send the whole transcript)."""
    return [
        filled_marker(e, state.messages, state.archived, state.thread_id)
        if is_snapshot_marker(e)
        else e
        for e in events
    ]


def result(log: ThreadLog, record: RunRecord, fill: bool = True) -> RunResult:
    """A run's answer: its events and where they start in the log. Snapshots are filled
    unless the gateway fills them (`fill` false) and the window is more than a short
    conversation: a result is written into the thread's history, so a long transcript
    stays out of it (the gateway reads it with one query); a short one comes along (no
    query, and the result stays small)."""
    events = log.events_between(record.first_offset, record.last_offset)
    if not fill:
        fill = _is_short(log.state.messages)
    return RunResult(
        events=fill_snapshots(events, log.state) if fill else events,
        first_offset=record.first_offset,
        owner=log.state.effective_owner,
        # the thread keeps what a kept run settled (`_log`): the same list when it is re-sent
        settled=[i.id for i in log.state.interrupts if i.resolved_by_run == record.run_id],
    )


RESULT_WINDOW_MESSAGES = 24
RESULT_WINDOW_BYTES = 16 * 1024
"""A window this small comes filled in a run's result even when the gateway fills it."""


def _is_short(messages: list[WireDict]) -> bool:
    return len(messages) <= RESULT_WINDOW_MESSAGES and json_size(messages) <= RESULT_WINDOW_BYTES


def replay_result(log: ThreadLog, request: RunRequest, run_id: str) -> RunResult:
    """A repeated resume: the outcome of the run that applied it, under the new run id."""
    original = log.run(run_id)
    assert original is not None
    return RunResult(
        events=replayed(result(log, original, request.fill_snapshots).events, request),
        first_offset=original.first_offset,
        owner=log.state.effective_owner,
    )


def withdraw_asked(state: ThreadState, run_id: str) -> None:
    """A run refused for asking too much leaves no interrupt of its own awaited."""
    for record in state.interrupts:
        if record.run_id == run_id and record.owner is None:
            record.withdraw()


def replayed(events: list[WireDict], request: RunRequest) -> list[WireDict]:
    """A repeated resume's answer: the events of the run that applied it, re-addressed to
    the new run (the gateway does the same for a run the archive holds)."""
    return readdressed(events, request.run_id, request.parent_run_id)


def start_indexing(
    state: ThreadState, record: RunRecord, enabled: bool
) -> asyncio.Future[None] | None:
    """Index the run, if the thread indexes runs, and only if it outlives the workflow task
    that started it (the run awaits it)."""
    if not enabled:
        return None
    return asyncio.ensure_future(_index_if_in_flight(state, record))


async def _index_if_in_flight(state: ThreadState, record: RunRecord) -> None:
    """Only a run that waits for a tool, a signal or a timer can be joined while it goes
    on; most runs end in their first task and skip the write. Conditions are checked once
    nothing else can run, so this sees how far the run got in this task (and sees it the
    same way on replay)."""
    await workflow.wait_condition(lambda: True)
    if not record.finished:
        index_runs(state)


def index_runs(state: ThreadState) -> None:
    """Record the recent run ids in `AguiRunIds`, where the gateway finds a run's thread
    by the run id alone (a visibility write: the server's largest cost of a run)."""
    sent = (state.client_run_id(run.run_id) for run in state.runs[-RUNS_KEPT:])
    recent = list(dict.fromkeys(sent))  # a run and its continuations: one id
    # a run id over the limit is joined by its thread id (the gateway refuses them)
    fitting = [run_id for run_id in recent if indexed_size(run_id) <= MAX_RUN_ID_BYTES]
    workflow.upsert_search_attributes([RUN_IDS.value_set(fitting)])


def events_page(log: ThreadLog, query: RunEventsQuery) -> RunEventsPage:
    """One run's events after `query.after` (the `run_events` query)."""
    run = _followed(log, query)
    owner, agent = log.state.effective_owner, log.state.agent
    if run is None or run.first_offset < log.state.events_start:
        return RunEventsPage(found=False, owner=owner, agent=agent)
    first = max(query.after + 1, run.first_offset)
    last = run.last_offset if run.finished else log.next_offset - 1
    return RunEventsPage(
        found=True,
        events=fill_snapshots(log.events_between(first, last), log.state),
        first_offset=first,
        finished=run.finished,
        owner=owner,
        agent=agent,
        brings=run.brings,
    )


def _followed(log: ThreadLog, query: RunEventsQuery) -> RunRecord | None:
    """The run a `run_events` query reads: the one its POST sent (`query.brings`; none until
    that run begins, so a continuation still waiting never shows the run it continues), or
    the newest sent under the id (a join, a POST that brings nothing)."""
    runs = log.sent(query.run_id)
    if query.brings in (None, BRINGS_NOTHING):
        return runs[-1] if runs else None
    return next((run for run in runs if run.brings == query.brings), None)


def activity_failed(err: ActivityError) -> RunErrorEvent:
    """A run's `RUN_ERROR` when one of its activities failed for good: a model response
    refused for its tool calls is over the agent's limit (`LIMIT_EXCEEDED`); anything else
    is `RUN_FAILED`, whose details stay in the worker's log."""
    cause = err.cause
    if isinstance(cause, ApplicationError) and cause.type == TOO_MANY_TOOL_CALLS:
        return RunErrorEvent(message=cause.message, code=ErrorCode.LIMIT_EXCEEDED)
    message = "an activity failed; see the worker logs"
    return RunErrorEvent(message=message, code=ErrorCode.RUN_FAILED)


def refusal_error(rejected: RunRejected, state: ThreadState | None = None) -> ApplicationError:
    """A contract rule's refusal as the update's failure (the gateway maps it back), the run
    its interrupts came from by the id its client sent (TanStack's `interruptedRunId`)."""
    rejection = rejected.rejection
    if state is not None and rejection.interrupted_run_id is not None:
        sent = state.client_run_id(rejection.interrupted_run_id)
        rejection = rejection.model_copy(update={"interrupted_run_id": sent})
    return ApplicationError(
        rejection.message,
        rejection.model_dump(mode="json"),
        type=rejection.code,
        non_retryable=True,
    )


def drop(state: ThreadState, run_ids: list[str]) -> None:
    """Remember runs the gateway's stuck-thread watch dropped (the latest few)."""
    dropped = [run_id for run_id in state.dropped_runs if run_id not in run_ids]
    state.dropped_runs = (dropped + run_ids)[-DROPPED_RUNS_KEPT:]


def check_not_dropped(state: ThreadState, request: RunRequest) -> None:
    """Refuse a copy of a dropped run: its client was told it was dropped, so it must never
    land (the caller answers a run the thread has, dropped or not, from its record)."""
    if request.run_id in state.dropped_runs:
        raise refusal_error(RunRejected(DROPPED_RUN))
