"""Offers shown as soon as they arrive, and shown again to a run that brings nothing.

An approver who opens her inbox must see what waits for her without sending anything
first. So when offers wait and nothing else awaits an answer, the thread starts a run of
its own (its own run id, the offers in its interrupt outcome), and a hydrate reports them
bound to that run at once.

An inbox shows every waiting item at once: an offer that arrives while
others await an answer makes the thread start such a run too, which delivers the awaiting
batch again, bound to itself, with the new offers, up to `max_interrupts_per_run` (the rest
wait for the next such run). Its interrupts are independent offers, so a partial resume (the
gateway's decision paths) answers one of them; the rest stay awaiting, bound to that run
(`bind_awaiting`): every awaiting interrupt of an inbox is one batch, of the latest run.

Elsewhere an agent's own interrupts await, and offers that arrive meanwhile wait for the run
that answers those, which delivers them as it ends (if it fails instead, or a withdrawal
leaves nothing awaiting, the thread's own run does). A client run that brings no input (no
new user message, no tool result, no resume) while interrupts await delivers them again,
bound to itself: a client may "fetch" its inbox with an empty run.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.workflows.contract import (
        INBOX_AGENT,
        ErrorCode,
        InterruptStatus,
        RunRequest,
    )
    from ag_ui_temporal.workflows.thread.state import ThreadState

from ag_ui_temporal.workflows.thread import _runs, _window
from ag_ui_temporal.workflows.thread._log import ThreadLog
from ag_ui_temporal.workflows.thread._resume import RunRejected


def deliverable(log: ThreadLog, per_run: int) -> bool:
    """Offers wait that only a run of the thread's own shows: nothing awaits an answer, or
    (an inbox) the awaiting batch has room for one more of the `per_run` a run delivers."""
    if not any(r.status == InterruptStatus.OFFERED for r in log.state.interrupts):
        return False
    awaiting = log.awaiting()
    return not awaiting or (len(awaiting) < per_run and _batches(log))


def _batches(log: ThreadLog) -> bool:
    """An inbox delivers offers next to awaiting interrupts (every other agent's let them
    wait for the answering run)."""
    return log.state.agent == INBOX_AGENT


def bind_awaiting(log: ThreadLog, run_id: str) -> None:
    """Every interrupt awaiting an answer is delivered (again) by this run, the others keep
    the run that delivered them: what awaits is one batch, and settled interrupts still leave
    the thread with their run (an inbox that always has something waiting stays bounded)."""
    awaiting = log.awaiting()
    batches = {record.run_id for record in awaiting if record.owner is None}
    for record in awaiting:
        record.redeliver(run_id)
    for record in log.state.interrupts:  # the calls of its batch answered at once move along
        if record.run_id in batches and record.resolved_via == "standing" and not record.acted:
            record.redeliver(run_id)


def brings_nothing(rejected: RunRejected, state: ThreadState, request: RunRequest) -> bool:
    """A run refused only because interrupts await, that brings no input at all, and may
    instead deliver them again."""
    if rejected.rejection.code != ErrorCode.RESUME_REQUIRED or request.resume:
        return False
    known = {message.get("id") for message in state.messages}
    unseen = _window.unseen(state, request.messages)
    if any(m.get("role") == "user" and m.get("id") not in known for m in unseen):
        return False
    return not _runs.client_results(state, request)


def bind_to(log: ThreadLog, run_id: str) -> None:
    """The awaiting batch is delivered (again) by this run: every interrupt of the run that
    delivered it moves along (also its expired or withdrawn ones), so an agent that groups
    a run's interrupts still finds the whole group."""
    batch = {record.run_id for record in log.awaiting()}
    for record in log.state.interrupts:
        if record.run_id in batch:
            record.redeliver(run_id)
