"""How the thread settles interrupts: answers applied, expiries, and owners told or asked.

An interrupt an external owner offered is settled only with that owner's
consent (`ask_owners`, before an answer is accepted), and its outcome is routed
to that owner and only to it (`tell_owners`). Expiries are the thread's own
durable timers (`next_expiry`, `due`), or a run that comes after a deadline whose timer has
not fired yet (`due` too); an expired interrupt is settled and blocks nothing (`lapsed`).
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.workflows.contract import (
        ASK_OWNER_ACTIVITY,
        INTERRUPT_SETTLED_SIGNAL,
        REFUSED_METADATA_KEY,
        DecisionVia,
        ErrorCode,
        InterruptClaim,
        InterruptSettled,
        InterruptStatus,
        ResumeItem,
        SettledStatus,
        SettlementQuery,
    )
    from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord
    from ag_ui_temporal.workflows.thread.state import ThreadState

from ag_ui_temporal.workflows._common import iso
from ag_ui_temporal.workflows._interrupt import INVALID_OFFER

ASK_OWNER_TIMEOUT = timedelta(seconds=10)
ASK_OWNER_RETRY = RetryPolicy(maximum_attempts=2)
ANSWERED = (InterruptStatus.RESOLVED, InterruptStatus.CANCELLED)
SETTLED: dict[InterruptStatus, SettledStatus] = {
    InterruptStatus.RESOLVED: "resolved",
    InterruptStatus.CANCELLED: "cancelled",
    InterruptStatus.EXPIRED: "expired",
}
"""The statuses an owner hears of, as `InterruptSettled.status` spells them."""


class OwnerClosed(Exception):
    """The owner closed interrupts this run answered: the run changes nothing."""

    def __init__(self, ids: list[str]) -> None:
        super().__init__(f"no longer answerable (its owner closed it): {', '.join(ids)}"[:1000])


def apply_answers(
    settle: list[tuple[InterruptRecord, ResumeItem]],
    run_id: str,
    principal: str | None,
    via: DecisionVia = "chat",
) -> None:
    """Record each answer on its interrupt, and how and when it came (an expired or
    withdrawn one keeps its status, and an expired one when it expired: a cancel only
    acknowledges it)."""
    now = iso(workflow.now())
    for interrupt, answer in settle:
        interrupt.answer(answer, run_id, principal, via, now)


def refusal(
    thread_id: str, interrupt_id: str, limit: int, invalid: str | None = None
) -> InterruptSettled:
    """What the owner of an offer the thread refused hears: `cancelled` with no run, marked
    under our own key (`offer_refusal` reads it): the thread was full, or (`invalid`: why)
    the offer was no valid interrupt."""
    code, message = INVALID_OFFER, invalid
    if invalid is None:
        code = ErrorCode.LIMIT_EXCEEDED.value
        message = f"the thread already holds {limit} pending interrupts"
    metadata = {REFUSED_METADATA_KEY: {"code": code, "message": message}}
    return InterruptSettled(
        interrupt_id=interrupt_id, thread_id=thread_id, status="cancelled", metadata=metadata
    )


def recorded(state: ThreadState, query: SettlementQuery, limit: int) -> InterruptSettled | None:
    """How the thread settled one of the asker's interrupts (None: it did not, or the
    interrupt is not the asker's): owners trust this, not the signal they heard."""
    if state.refused.get(query.interrupt_id) == query.owner_workflow_id:
        invalid = state.refused_invalid.get(query.interrupt_id)
        return refusal(state.thread_id, query.interrupt_id, limit, invalid)
    record = next((r for r in state.interrupts if r.id == query.interrupt_id), None)
    if record is None or record.owner != query.owner_workflow_id:
        return None
    if record.status not in SETTLED:
        return None
    run_id = record.resolved_by_run and state.client_run_id(record.resolved_by_run)
    return settlement(state.thread_id, record, run_id)


def settlement(thread_id: str, record: InterruptRecord, run_id: str | None) -> InterruptSettled:
    """What the owner of `record` hears (and confirms against the thread's record). Who
    answered and how only with an answer, as the audit's `answered` record has them: an
    expiry names nobody, also once a client's cancel acknowledged it."""
    answer = record.resolution
    answered = answer is not None and record.status in ANSWERED
    return InterruptSettled(
        interrupt_id=record.id,
        thread_id=thread_id,
        status=SETTLED[record.status],
        payload=answer.payload if answer is not None else None,
        metadata=answer.metadata if answer is not None else None,
        run_id=run_id,
        principal=record.resolved_by if answered else None,
        via=record.resolved_via if answered else None,
        at=record.resolved_at,
    )


async def tell_owners(thread_id: str, records: list[InterruptRecord], run_id: str | None) -> None:
    """Route each settled interrupt to its owner workflow, and only to it."""
    if not records:
        return

    async def tell(record: InterruptRecord) -> None:
        assert record.owner is not None
        settled = settlement(thread_id, record, run_id)
        try:
            await workflow.get_external_workflow_handle(record.owner).signal(
                INTERRUPT_SETTLED_SIGNAL, settled
            )
        except Exception as err:  # the owner is gone (finished, terminated)
            workflow.logger.warning("owner %s not told of %s: %s", record.owner, record.id, err)

    await asyncio.gather(*(tell(record) for record in records))


async def ask_owners(
    settle: list[tuple[InterruptRecord, ResumeItem]], principal: str | None
) -> list[InterruptRecord]:
    """Before an answer to an external owner's interrupt is accepted, the owner says
    whether it still takes it (it may have closed the seat a moment ago). Return the
    interrupts whose owner refused (or that were withdrawn while asking)."""
    asked = [
        record
        for record, answer in settle
        if record.owner is not None
        and answer.status == "resolved"
        and record.status == InterruptStatus.OPEN
    ]
    if not asked:
        return []
    answers = await asyncio.gather(*(_takes(record, principal) for record in asked))
    return [
        record
        for record, ok in zip(asked, answers, strict=True)
        if not ok or record.status != InterruptStatus.OPEN  # withdrawn while asking
    ]


async def _takes(record: InterruptRecord, principal: str | None) -> bool:
    assert record.owner is not None
    claim = InterruptClaim(
        interrupt_id=record.id, owner_workflow_id=record.owner, principal=principal
    )
    try:
        taken: bool = await workflow.execute_activity(
            ASK_OWNER_ACTIVITY,
            claim,
            result_type=bool,
            start_to_close_timeout=ASK_OWNER_TIMEOUT,
            retry_policy=ASK_OWNER_RETRY,
        )
        return taken
    except ActivityError as err:  # the owner is slow or unreachable: it decides later
        workflow.logger.warning("owner of %s not asked: %s", record.id, err)
        return True


def next_expiry(interrupts: list[InterruptRecord], now: datetime) -> timedelta | None:
    """How long until the first unsettled interrupt expires (None: none has a deadline)."""
    deadlines = [d for i in interrupts if (d := i.deadline) is not None]
    if not deadlines:
        return None
    return max(min(deadlines) - now, timedelta(milliseconds=1))


def due(interrupts: list[InterruptRecord], now: datetime) -> list[InterruptRecord]:
    """The interrupts that expire at `now` (`InterruptView.due`): their timer fired, or a run
    arriving `now` expires them before it is planned, as their timer would a moment later."""
    return [i for i in interrupts if i.due(now)]


async def settle(
    thread_id: str,
    answers: list[tuple[InterruptRecord, ResumeItem]],
    run_id: str,
    principal: str | None,
    via: DecisionVia = "chat",
    sent_as: str | None = None,
) -> list[InterruptRecord]:
    """Record a resume's answers (`via`: how they came) and tell external owners theirs (the
    run by the id its client sent, `sent_as`); return the agent's own that were answered
    (resolved or cancelled), for it to act on."""
    apply_answers(answers, run_id, principal, via)
    answered = [i for i, _ in answers if i.status in ANSWERED]
    owners = [i for i in answered if i.owner is not None]
    await tell_owners(thread_id, owners, sent_as or run_id)
    return [i for i in answered if i.owner is None]


async def expire(state: ThreadState, due: list[InterruptRecord]) -> list[InterruptRecord]:
    """Expire the `due` interrupts still unsettled (the caller holds the run lock: a run may
    have settled some meanwhile); tell owners theirs; return the agent's own. A delivered one
    is `lapsed`: settled, no answer awaited."""
    now = iso(workflow.now())
    due = [i for i in due if i.expire(now)]
    await tell_owners(state.thread_id, [i for i in due if i.owner is not None], None)
    return [i for i in due if i.owner is None]
