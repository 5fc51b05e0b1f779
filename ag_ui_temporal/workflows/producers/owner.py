"""The owner's side of an interrupt offered to a thread: what it heard, what it promised.

Kept on the owner workflow's instance (its handlers are registered on first use):
the settled box (settlements the thread's own record confirmed), the claims (the
thread asks before it accepts an answer: withdrawn interrupts are refused,
accepted ones promised), and where each offer went (to confirm a settlement there).
An owner whose deadline passes unheard reads the thread's record before it calls the
interrupt expired (`recorded_at_deadline`): what the thread shows as answered is what
the owner ends with, even if the settlement signal was lost on its way.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.workflows.contract import (
        CLAIM_UPDATE,
        CONFIRM_SETTLED_ACTIVITY,
        INTERRUPT_SETTLED_SIGNAL,
        TASK_QUEUE,
        InterruptClaim,
        InterruptSettled,
        SettlementQuery,
    )

SIGNAL_TIMEOUT = timedelta(seconds=30)
SIGNAL_RETRY = RetryPolicy(maximum_interval=timedelta(seconds=10))
CONFIRM_WITHIN = timedelta(hours=1)
"""How long an owner keeps trying to confirm a claim (thread workers down) before dropping it."""
RECORD_WITHIN = timedelta(minutes=5)
"""How long an owner whose deadline passed unheard asks the thread for its record (thread
workers down) before it calls the interrupt expired."""
_SETTLED_ATTR = "_agui_interrupts_settled"
_OFFERED_ATTR = "_agui_interrupts_offered"
_CLAIMS_ATTR = "_agui_interrupt_claims"


@dataclass
class _Claims:
    closed: set[str]
    """Interrupts this workflow withdrew: answers to them are refused."""
    promised: set[str]
    """Interrupts whose answer the thread accepted after asking: on their way."""


def _claims() -> _Claims:
    instance = workflow.instance()
    claims: _Claims | None = getattr(instance, _CLAIMS_ATTR, None)
    if claims is None:
        claims = _Claims(set(), set())
        setattr(instance, _CLAIMS_ATTR, claims)

        def on_claim(claim: Any) -> bool:
            if not isinstance(claim, InterruptClaim):  # temporalio's default converter: a dict
                claim = InterruptClaim.model_validate(claim)
            if claim.interrupt_id in claims.closed:
                return False
            claims.promised.add(claim.interrupt_id)
            return True

        workflow.set_update_handler(CLAIM_UPDATE, on_claim)
    return claims


def promised() -> set[str]:
    """Interrupts whose answer a thread accepted (it asked first): their settlement comes."""
    return _claims().promised


def close_interrupts(ids: list[str]) -> None:
    """From now on, refuse answers to these interrupts (before withdrawing them)."""
    claims = _claims()
    claims.closed.update(i for i in ids if i not in claims.promised)


def settled_box() -> dict[str, InterruptSettled]:
    """This workflow's confirmed settlements (the signal handler is registered once)."""
    instance = workflow.instance()
    box: dict[str, InterruptSettled] | None = getattr(instance, _SETTLED_ATTR, None)
    if box is None:
        box = {}
        setattr(instance, _SETTLED_ATTR, box)

        async def on_settled(settled: Any) -> None:
            if not isinstance(settled, InterruptSettled):
                settled = InterruptSettled.model_validate(settled)
            if settled.interrupt_id in box:
                return
            if settled.status == "expired":
                # This workflow's own timer at the same instant decides (no claim to
                # trust), and waking for it could race that timer.
                return
            confirmed = await _confirm(settled.interrupt_id, settled.thread_id)
            if confirmed is None:
                workflow.logger.warning(
                    "settlement of %s not confirmed by its thread: dropped", settled.interrupt_id
                )
                return
            box.setdefault(confirmed.interrupt_id, confirmed)

        workflow.set_signal_handler(INTERRUPT_SETTLED_SIGNAL, on_settled)
        _claims()
    return box


def _offered() -> dict[str, tuple[str, str]]:
    """Interrupt id -> (thread id, thread task queue) of what this run offered or awaits."""
    instance = workflow.instance()
    offered: dict[str, tuple[str, str]] | None = getattr(instance, _OFFERED_ATTR, None)
    if offered is None:
        offered = {}
        setattr(instance, _OFFERED_ATTR, offered)
    return offered


def expect_settlement(interrupt_id: str, thread_id: str, thread_task_queue: str) -> None:
    """Where to confirm a settlement of `interrupt_id` (after continue-as-new: the new run
    knows nothing of the offers the earlier runs made)."""
    _offered()[interrupt_id] = (thread_id, thread_task_queue)


async def recorded_at_deadline(interrupt_id: str, thread_id: str) -> InterruptSettled | None:
    """What the thread recorded for an interrupt whose deadline passed with no settlement
    heard, kept in the settled box: an answer the thread accepted (and shows as answered)
    whose signal never reached this workflow still counts. None: it expired."""
    recorded = await _confirm(interrupt_id, thread_id, within=RECORD_WITHIN)
    if recorded is None or recorded.status == "expired":
        return None
    return settled_box().setdefault(interrupt_id, recorded)


async def _confirm(
    interrupt_id: str, claimed_thread_id: str, within: timedelta = CONFIRM_WITHIN
) -> InterruptSettled | None:
    """The thread's own record of the interrupt's settlement, asked of the thread this
    workflow offered it to (None: not settled there, or no answer within `within`)."""
    offered = _offered()
    thread_id, queue = offered.get(interrupt_id) or (
        claimed_thread_id,  # an offer of an earlier run that did not say where it went
        next(reversed(offered.values()))[1] if offered else TASK_QUEUE,
    )
    query = SettlementQuery(
        interrupt_id=interrupt_id,
        owner_workflow_id=workflow.info().workflow_id,
        thread_id=thread_id,
    )
    try:
        # JSON both ways, not models: the owner's worker may run temporalio's default
        # converter, which takes pydantic models only through pydantic v1's deprecated methods
        confirmed: Any = await workflow.execute_activity(
            CONFIRM_SETTLED_ACTIVITY,
            query.model_dump(mode="json"),
            task_queue=queue,
            start_to_close_timeout=SIGNAL_TIMEOUT,
            schedule_to_close_timeout=within,
            retry_policy=SIGNAL_RETRY,
        )
        return None if confirmed is None else InterruptSettled.model_validate(confirmed)
    except ActivityError as err:
        workflow.logger.warning("cannot confirm %s: %s", interrupt_id, err)
        return None
