"""Stopping a run (the `cancel_run` update): which runs, who may, and how a stopped run ends.

A run is stopped at its agent's step. The model request or tool the agent awaits is
cancelled (Temporal's `TRY_CANCEL`: the workflow goes on at once, and the activity learns of
it at its next heartbeat, `ag_ui_temporal.heartbeats`), no further model request is made,
what was streamed stays in the transcript marked as stopped (`STOPPED_METADATA_KEY`, by the
agent: `RunWriter.stop`), and the run ends with `RUN_ERROR` `RUN_CANCELLED`. A stop that
comes while the run settles answers, before its agent acts, takes effect where the agent
would begin; one that comes once the agent is done changes nothing: the run ends as it would
have, and the update answers `finished`. Either way the run has exactly one ending.

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
    """The stop of one run in flight (`ThreadWorkflow.stopping` while the run goes on)."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self.stopped = False
        """The run ended stopped (`RUN_CANCELLED`)."""
        self._acting: asyncio.Task[Any] | None = None
        """The run's task while its agent acts (the only time a stop cancels it)."""

    @property
    def run_id(self) -> str | None:
        return self.turn.run_id

    def requested(self) -> bool:
        """Whether a stop was asked for (a call: it changes while the agent awaits)."""
        return self.turn.stop_requested

    def request(self) -> None:
        """Stop the run: at once if its agent is acting, else where it would begin."""
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
    assert stop.run_id is not None
    stop.stopped = True
    withdraw_asked(state, stop.run_id)
    stop.turn.emit(RunErrorEvent(message=STOPPED, code=ErrorCode.RUN_CANCELLED))


def check(log: ThreadLog, request: CancelRun) -> RunRecord:
    """The run `request` stops (the newest sent under its id: a continuation, once there is
    one), or the refusal (the validator's: nothing is recorded). A caller who may not act on
    the thread is told what a caller naming no run is told."""
    sent = log.sent(request.run_id)
    record = sent[-1] if sent else None
    owner = log.state.effective_owner
    if record is None or not may_act(owner, request.principal, request.groups, request.admin):
        raise _refusal(CancelRefusal.UNKNOWN_RUN, f"no run {request.run_id[:200]!r} here")
    if record.finished:
        raise _refusal(CancelRefusal.RUN_ENDED, f"run {request.run_id[:200]!r} has ended")
    return record


async def cancel(log: ThreadLog, stop: RunStop | None, request: CancelRun) -> CancelRunResult:
    """Stop the run (checked by the validator) and answer once it has ended."""
    record = check(log, request)
    if stop is not None and stop.run_id == record.run_id:
        stop.request()
    await workflow.wait_condition(lambda: record.finished)
    stopped = stop is not None and stop.run_id == record.run_id and stop.stopped
    return CancelRunResult(status="cancelled" if stopped else "finished")


def _refusal(kind: CancelRefusal, message: str) -> ApplicationError:
    return ApplicationError(message, type=kind.value, non_retryable=True)
