"""What producers outside the thread send it: offered interrupts, withdrawals, posts.

An offer waits (`offered`) until a run delivers it, bound to that run: the
thread's own as it arrives when nothing else awaits an answer or the thread is an
inbox (`_delivery`), else the run that answers what awaits; a full thread refuses it
at once, and so does any thread an offer that is no valid interrupt (a hand-made
signal). A post is in the transcript as soon as it arrives and is streamed as text by
the next run.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ag_ui.core import AssistantMessage

    from ag_ui_temporal.workflows.contract import (
        INTERRUPT_SETTLED_SIGNAL,
        PENDING_STATUSES,
        REFUSED_KEPT,
        InterruptStatus,
        OfferInterrupt,
        PostMessage,
        WithdrawInterrupt,
        wire,
    )
    from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord
    from ag_ui_temporal.workflows.thread.state import ThreadState

from ag_ui_temporal.workflows._interrupt import interrupt_problem
from ag_ui_temporal.workflows.thread._log import ThreadLog
from ag_ui_temporal.workflows.thread._settlement import refusal
from ag_ui_temporal.workflows.thread.turn import Turn, message_text


def pending(state: ThreadState) -> int:
    """Open and offered interrupts: what counts against `max_pending_interrupts`."""
    return sum(1 for r in state.interrupts if r.status in PENDING_STATUSES)


def offered_record(offer: OfferInterrupt) -> InterruptRecord:
    """The thread's record of an offer, until a run delivers it."""
    return InterruptRecord.offered(offer)


async def refuse(
    state: ThreadState, offer: OfferInterrupt, limit: int, invalid: str | None = None
) -> None:
    """A full thread takes no more offers (nor one that is no valid interrupt, `invalid`
    says why): the owner hears so at once instead of waiting in vain, and may confirm it
    (`state.refused`)."""
    settled = refusal(state.thread_id, str(offer.interrupt["id"]), limit, invalid)
    why = "thread is full" if invalid is None else invalid
    workflow.logger.warning("offer %s refused: %s", settled.interrupt_id, why)
    state.refused[settled.interrupt_id] = offer.owner_workflow_id
    if invalid is not None:
        state.refused_invalid[settled.interrupt_id] = invalid
    while len(state.refused) > REFUSED_KEPT:  # oldest first (dicts keep order)
        oldest = next(iter(state.refused))
        del state.refused[oldest]
        state.refused_invalid.pop(oldest, None)
    try:
        await workflow.get_external_workflow_handle(offer.owner_workflow_id).signal(
            INTERRUPT_SETTLED_SIGNAL, settled
        )
    except Exception as err:  # the owner is gone
        workflow.logger.warning("owner %s not told: %s", offer.owner_workflow_id, err)


async def admissible(log: ThreadLog, offer: OfferInterrupt, limit: int) -> bool:
    """Whether the thread takes this offer in: not a retry of one it has, and a valid
    interrupt. One that is not (a hand-made signal: `offer_in_thread` refuses such offers
    before sending) is dropped, its owner told as a full thread tells it, instead of
    failing the workflow task on every retry."""
    interrupt_id = offer.interrupt.get("id")
    named = isinstance(interrupt_id, str) and interrupt_id != ""
    if named and log.interrupt(str(interrupt_id)) is not None:
        return False  # a retried offer: the thread has it
    problem = interrupt_problem(offer.interrupt)
    if problem is None:
        return log.interrupt(str(offer.interrupt["id"])) is None
    why = str(problem)[:500]
    if named and offer.owner_workflow_id:
        await refuse(log.state, offer, limit, why)
    else:
        workflow.logger.warning("offer without an id or owner dropped: %s", why)
    return False


def withdraw(log: ThreadLog, withdrawal: WithdrawInterrupt) -> bool:
    """Take the owner's interrupt back if it is still unanswered; whether it was."""
    record = log.interrupt(withdrawal.interrupt_id)
    if record is None or record.owner != withdrawal.owner_workflow_id:
        return False
    return record.withdraw()


def deliver_offers(log: ThreadLog, run_id: str, per_run: int) -> None:
    """Offered interrupts open, bound to this run, up to the per-run limit (so one
    resume can answer the batch); the rest wait, in order, for the next run."""
    offered = [r for r in log.state.interrupts if r.status == InterruptStatus.OFFERED]
    room = per_run - len(log.awaiting())
    for record in offered[: max(room, 0)]:
        record.deliver(run_id)


def post(state: ThreadState, message: PostMessage) -> None:
    """A producer's message: in the transcript now, streamed as text on the next run."""
    if any(m.get("id") == message.message_id for m in state.messages):
        return
    state.messages.append(wire(AssistantMessage(id=message.message_id, content=message.text)))
    state.undelivered_posts.append(message.message_id)


def deliver_posts(state: ThreadState, turn: Turn) -> int:
    """Stream the messages producers posted since the last run; return how many."""
    if not state.undelivered_posts:
        return 0
    by_id = {m.get("id"): m for m in state.messages}
    ids, state.undelivered_posts = state.undelivered_posts, []
    for message_id in ids:
        turn.show_text(message_id, message_text(by_id.get(message_id) or {}) or " ")
    return len(ids)
