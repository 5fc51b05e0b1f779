"""Stopping a run (the `cancel_run` update): which runs, who may, and how a stopped run ends.

A run is stopped at its agent's step. The model request or tool the agent awaits is
cancelled (Temporal's `TRY_CANCEL`: the workflow goes on at once, and the activity learns of
it at its next heartbeat, `ag_ui_temporal.heartbeats`), no further model request is made,
what was streamed stays in the transcript marked as stopped (`STOPPED_METADATA_KEY`, by the
agent: `RunWriter.stop`), and the run ends with `RUN_ERROR` `RUN_CANCELLED`. A stop that
comes while the run settles answers, before its agent acts, takes effect where the agent
would begin; one that comes once the agent is done changes nothing: the run ends as it would
have, and the update answers `finished`. Either way the run has exactly one ending.

A run whose update was accepted while another run of the thread goes on waits for the run
lock, not in the log yet: a stop may name it all the same, and the run begins stopped: it
settles what it answers and ends `RUN_CANCELLED` where its agent would begin.

Who may stop a run (`may_stop`): its sender or an admin, among those who may act on the
thread; another member of the owning group is refused (`NotSender`); a stranger is told
what a caller naming no run is told.

What is cancelled is the run's own task (the `run` update's handler), not a task made for
the agent: awaiting the agent in a task of its own would issue its first command after
whatever else is ready in that activation, where the recorded histories issued it before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from ag_ui.core import RunErrorEvent

    from ag_ui_temporal.workflows.contract import (
        CancelRefusal,
        CancelRun,
        CancelRunResult,
        ErrorCode,
        may_act,
        may_stop,
    )
    from ag_ui_temporal.workflows.thread.state import RunRecord, ThreadState

from ag_ui_temporal.workflows.thread._log import ThreadLog
from ag_ui_temporal.workflows.thread._runs import withdraw_asked
from ag_ui_temporal.workflows.thread.turn import Turn

STOPPED = "the run was stopped"
"""The `RUN_ERROR` message of a stopped run."""


class RunStopped(Exception):
    """The run was stopped: its agent's step was cancelled, or never began."""


class RunStop:
    """The stop of one run the thread accepted: while it waits for the run lock (`begun`
    false: not in the log yet), then in flight (`ThreadWorkflow.stopping`)."""

    def __init__(self, run_id: str, sent_by: str | None = None) -> None:
        self.run_id = run_id
        self.sent_by = sent_by
        """Who sent the run (`may_stop`)."""
        self.turn: Turn | None = None
        """The run's turn, once it has begun (`begin`)."""
        self.stopped = False
        """The run ended stopped (`RUN_CANCELLED`)."""
        self.gone = False
        """The run's update has been answered (it ran, or was refused or answered as a
        repeat): a stop waiting for it answers then."""
        self._requested = False
        self._acting: asyncio.Task[Any] | None = None
        """The run's task while its agent acts (the only time a stop cancels it)."""

    @property
    def begun(self) -> bool:
        return self.turn is not None

    @property
    def own_id(self) -> str | None:
        """The run's id in the thread once it has begun: the client's, or a continuation's own
        (`ThreadLog.own_id`); `run_id` is the id the client sent."""
        return self.turn.run_id if self.turn is not None else None

    def begin(self, turn: Turn) -> None:
        """The run opens (it is in the log from now on): a stop asked for while it waited
        takes effect where its agent would begin."""
        self.turn = turn
        turn.stop_requested = self._requested

    def requested(self) -> bool:
        """Whether a stop was asked for (a call: it changes while the agent awaits)."""
        return self._requested

    def request(self) -> None:
        """Stop the run: at once if its agent is acting, else where it would begin."""
        self._requested = True
        if self.turn is not None:
            self.turn.stop_requested = True
        if self._acting is not None:
            self._acting.cancel()

    async def step(self, act: Callable[[], Awaitable[None]]) -> None:
        """The agent acts (`act()`), unless the run is stopped: then `RunStopped`."""
        if self.requested():
            raise RunStopped
        task = self._acting = asyncio.current_task()
        try:
            await act()
        except (Exception, asyncio.CancelledError):
            # What a cancelled agent raises: `CancelledError`, or the `ActivityError` of an
            # activity it awaited directly (the cancel went to the activity). Only after this
            # stop cancelled the task (never the worker tearing the workflow down: that is no
            # `Exception`, and no stop asked for it).
            if task is None or not (self.requested() and task.cancelling()):
                raise
            task.uncancel()  # taken: the run's task goes on to end the run
            raise RunStopped from None
        finally:
            self._acting = None
        if task is not None and self.requested() and task.cancelling():
            task.uncancel()  # the agent finished even so: the run ends as it would have


async def step(stop: RunStop | None, act: Callable[[], Awaitable[None]]) -> None:
    """`stop.step(act)`, or just `act()` where nothing can stop the run."""
    if stop is None:
        await act()
    else:
        await stop.step(act)


def end_stopped(state: ThreadState, stop: RunStop) -> None:
    """The stopped run's ending: no interrupt of its own awaits, `RUN_ERROR` `RUN_CANCELLED`."""
    assert stop.turn is not None and stop.own_id is not None
    stop.stopped = True
    withdraw_asked(state, stop.own_id)
    stop.turn.emit(RunErrorEvent(message=STOPPED, code=ErrorCode.RUN_CANCELLED))


def check(log: ThreadLog, stops: list[RunStop], request: CancelRun) -> RunRecord | RunStop:
    """What `request` stops: a run sent under its id that waits for the run lock (not in the
    log yet, so newer than any run there: a continuation waits so), else the newest run in
    the log sent under it (a continuation, once there is one); or the refusal (the
    validator's: nothing is recorded). A caller who may not act on the thread is told what a
    caller naming no run is told."""
    waiting = _waiting(stops, request.run_id)
    sent = log.sent(request.run_id) if waiting is None else []
    record = sent[-1] if sent else None
    owner = log.state.effective_owner
    if (record is None and waiting is None) or not may_act(
        owner, request.principal, request.groups, request.admin
    ):
        raise _refusal(CancelRefusal.UNKNOWN_RUN, f"no run {request.run_id[:200]!r} here")
    sent_by = record.sent_by if record is not None else waiting.sent_by if waiting else None
    if not may_stop(sent_by, request.principal, request.admin):
        message = f"run {request.run_id[:200]!r} was sent by another; only its sender or an admin"
        raise _refusal(CancelRefusal.NOT_SENDER, f"{message} may stop it")
    if record is None:
        assert waiting is not None
        return waiting
    if record.finished:
        raise _refusal(CancelRefusal.RUN_ENDED, f"run {request.run_id[:200]!r} has ended")
    return record


async def cancel(
    log: ThreadLog, stop: RunStop | None, stops: list[RunStop], request: CancelRun
) -> CancelRunResult:
    """Stop the run (checked by the validator) and answer once it has ended: `stop` is the
    run in flight, `stops` every run accepted and not yet answered."""
    target = check(log, stops, request)
    if isinstance(target, RunStop):  # waiting for the run lock: it begins stopped
        target.request()
        await workflow.wait_condition(lambda: target.gone)
        return CancelRunResult(status="cancelled" if target.stopped else "finished")
    record = target
    if stop is not None and stop.own_id == record.run_id:
        stop.request()
    await workflow.wait_condition(lambda: record.finished)
    stopped = stop is not None and stop.own_id == record.run_id and stop.stopped
    return CancelRunResult(status="cancelled" if stopped else "finished")


def _waiting(stops: list[RunStop], run_id: str) -> RunStop | None:
    """The run `run_id` accepted and waiting for the run lock (the first, if re-sent)."""
    return next((s for s in stops if s.run_id == run_id and not s.begun), None)


def _refusal(kind: CancelRefusal, message: str) -> ApplicationError:
    return ApplicationError(message, type=kind.value, non_retryable=True)
