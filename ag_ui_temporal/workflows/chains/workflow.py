"""`ApprovalChain`: sequential steps, quorum, reminders, expiry and escalation, on producers.

Each step offers one seat per approver to the approver's inbox thread
(`workflows.chains._offers`) and collects the answers the threads route back
(`agui_interrupt_settled`). Every decision lands in the audit trail with who,
when, the payload and the resume metadata; the `chain` query returns the
contract's `ChainView` of it, also after the chain finished. The search
attributes `AguiApprovalPending` / `AguiApprovalParticipants` let the gateway
list what waits for whom, and a small summary in the memo lets it answer a page
of the list without querying each chain (`workflows.chains._memo`). Long chains
continue as new with their state (`workflows.chains._state`).

Rules (decided in `workflows.chains._quorum`): only answers the inbox
thread recorded count (see `workflows.producers`); the requester holds no seat and
their answers do not count (unless the definition sets `allow_self_approval`); a
quorum counts distinct people; `delegateTo` must be one of the seat's allowed
delegates (the offered schema lists them, so the thread refuses anything else with
`INVALID_PAYLOAD`); an offer the server refuses leaves a seat that waits for the
step's deadline.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

from temporalio import workflow

# Data modules (pydantic models): the host's classes, so a carried state is the same type.
with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.workflows.chains._state import ChainState, Reminder, StepState, chain_view
    from ag_ui_temporal.workflows.chains.definitions import ChainInput, ChainStep
    from ag_ui_temporal.workflows.contract.chains import (
        APPROVAL_CHAIN_WORKFLOW,
        CHAIN_QUERY,
        AuditKind,
        ChainView,
        decision_schema,
    )

from temporalio.exceptions import ActivityError

from ag_ui_temporal.workflows._common import iso, should_continue_as_new
from ag_ui_temporal.workflows.chains import _audit, _quorum
from ag_ui_temporal.workflows.chains._answers import apply_answers, audit, record_late
from ag_ui_temporal.workflows.chains._memo import Published, outcome_text, reminder_text
from ag_ui_temporal.workflows.chains._notices import outcome_notice, reminder_notices
from ag_ui_temporal.workflows.chains._offers import failed_seat, offer_seat, remind, withdraw
from ag_ui_temporal.workflows.notices import tell
from ag_ui_temporal.workflows.producers import post_to_thread
from ag_ui_temporal.workflows.producers.owner import (
    close_interrupts,
    expect_settlement,
    promised,
    settled_box,
)


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text)


@workflow.defn(name=APPROVAL_CHAIN_WORKFLOW)
class ApprovalChain:
    @workflow.init
    def __init__(self, input: ChainInput) -> None:
        self.input = input
        self.state = input.carried or ChainState(
            chain_id=input.chain_id,
            title=input.title or input.definition.name,
            requester=input.requester,
            request=input.request,
        )
        self.rules = _quorum.Rules()
        self.published = Published(memo=False)
        self.auditing: asyncio.Task[None] | None = None

    @workflow.query(name=CHAIN_QUERY)
    def chain(self) -> ChainView:
        return chain_view(self.state)

    @workflow.run
    async def run(self, input: ChainInput) -> ChainView:
        settled_box()  # hear answers from the first moment (also after continue-as-new)
        self.rules = _quorum.Rules(
            requester=self.state.requester,
            allow_self_approval=input.definition.allow_self_approval,
            known=input.definition.known_principals(),
        )
        self.published = Published(memo=input.index)
        self.auditing = asyncio.ensure_future(self._write_audit())
        state = self.state
        for step in state.steps:  # where earlier runs' offers went (to confirm answers)
            for slot in step.slots:
                expect_settlement(slot.interrupt_id, slot.thread_id, input.thread_task_queue)
        if not state.steps and state.status == "running":
            self._plan()
        while state.status == "running" and state.current < len(state.steps):
            step = state.steps[state.current]
            await self._run_step(step, self._definition_step(step.name))
            if step.status == "approved":
                state.current += 1
            else:
                state.status = "rejected" if step.status == "rejected" else "cancelled"
        if state.status == "running":
            state.status = "approved"
        await self._finish()
        return chain_view(state)

    async def _finish(self) -> None:
        """The outcome: in the trail, the index, the requester's thread and notices."""
        state, input = self.state, self.input
        self._audit("completed", decision=state.status)
        self._index()
        if input.requester_thread:
            await post_to_thread(
                input.requester_thread,
                outcome_text(state),
                agent=input.requester_agent,
                thread_task_queue=input.thread_task_queue,
            )
        await tell(outcome_notice(state, input.requester_thread), input.thread_task_queue)
        # the chain ends once its whole trail is in the store
        await workflow.wait_condition(lambda: not _audit.unwritten(state))

    def _plan(self) -> None:
        definition = self.input.definition
        for step in definition.steps_for(self.state.request):
            approvers, quorum = _quorum.seats(definition.principals(step), step.quorum, self.rules)
            self.state.steps.append(
                StepState(
                    name=step.name,
                    approvers=approvers,
                    quorum=quorum,
                    any_rejection_rejects=step.any_rejection_rejects,
                )
            )
        self._audit("submitted", principal=self.state.requester, payload=self.state.request)

    def _definition_step(self, name: str) -> ChainStep:
        return next(s for s in self.input.definition.steps if s.name == name)

    # -- one step -----------------------------------------------------------------

    async def _start_step(self, step: StepState, spec: ChainStep) -> None:
        now = workflow.now()
        step.status = "active"
        step.started_at = iso(now)
        if spec.expires_in is not None:
            step.deadline = iso(now + spec.expires_in)
        if not step.approvers:  # only the requester was named
            step.deadline = iso(now)  # the expiry rule decides at once
        self._schedule_reminder(step, spec, now)
        self._audit("step", step=step.name, note=f"started: {step.quorum} of {step.approvers}")
        for principal in step.approvers:
            await self._offer(step, principal)

    async def _run_step(self, step: StepState, spec: ChainStep) -> None:
        if step.status == "waiting":
            await self._start_step(step, spec)
        box = settled_box()
        while step.status == "active":
            apply_answers(self.state, step, box, self.rules)
            await self._offer_delegations(step)
            now = workflow.now()
            past_deadline = step.deadline is not None and now >= _at(step.deadline)
            step.status = _quorum.decide(step, self.rules, expiring=past_deadline)
            if step.status == "active" and past_deadline:
                await self._expire(step, spec)
            self._index()
            if step.status != "active":
                break
            if step.next_reminder is not None and now >= _at(step.next_reminder):
                await self._remind(step, spec)
                continue
            await self._continue_as_new_if_long()
            await self._wait(step, box, now)
        step.ended_at = iso(workflow.now())
        await self._close_waiting(step)
        self._audit("step", step=step.name, decision=step.status)

    async def _wait(self, step: StepState, box: dict[str, Any], now: datetime) -> None:
        """Until an answer to a waiting seat arrives, or the next deadline or reminder."""
        wake = [_at(t) for t in (step.deadline, step.next_reminder) if t is not None]
        timeout = max(min(wake) - now, timedelta(milliseconds=1)) if wake else None
        waiting = [s.interrupt_id for s in step.slots if s.status == "waiting"]
        try:
            await workflow.wait_condition(lambda: any(i in box for i in waiting), timeout=timeout)
        except TimeoutError:
            pass

    async def _continue_as_new_if_long(self) -> None:
        if should_continue_as_new(self.input.history_limit):
            await workflow.wait_condition(workflow.all_handlers_finished)  # confirmations
            self.state.runs += 1
            workflow.continue_as_new(self.input.model_copy(update={"carried": self.state}))

    async def _offer(
        self,
        step: StepState,
        principal: str,
        *,
        delegated_from: str | None = None,
        escalation: bool = False,
        deadline: datetime | None = None,
    ) -> None:
        deadline = deadline or (_at(step.deadline) if step.deadline else None)
        delegates = _quorum.delegates(step, principal, self.rules)
        try:
            slot = await offer_seat(
                self.state,
                step,
                principal,
                schema=decision_schema(delegates),
                deadline=deadline,
                delegated_from=delegated_from,
                escalation=escalation,
                task_queue=self.input.thread_task_queue,
            )
        except ActivityError as err:
            step.slots.append(failed_seat(principal, delegated_from, escalation))
            cause = str(err.cause or err)[:300]
            note = f"offer failed: {cause}"
            self._audit("refused", step=step.name, principal=principal, note=note)
            return
        step.slots.append(slot)
        self._audit("offered", step=step.name, principal=principal, interrupt_id=slot.interrupt_id)

    async def _offer_delegations(self, step: StepState) -> None:
        for slot in list(step.slots):
            if slot.status != "delegated":
                continue
            target = next(
                e.note
                for e in reversed(self.state.audit)
                if e.kind == "delegated" and e.interrupt_id == slot.interrupt_id
            )
            slot.status = "closed"
            assert target is not None
            await self._offer(
                step,
                target,
                delegated_from=slot.assignee,
                escalation=slot.escalation,
                deadline=_at(slot.expires_at) if slot.expires_at else None,
            )

    async def _expire(self, step: StepState, spec: ChainStep) -> None:
        self._audit("expired", step=step.name, note=f"expired at {step.deadline}")
        if self.rules.is_requester(spec.escalate_to):
            step.status = "rejected"  # the requester cannot be the one who decides
            return
        if spec.on_expiry == "escalate" and step.escalated_to is None:
            assert spec.escalate_to is not None and spec.expires_in is not None
            await self._close_waiting(step)
            now = workflow.now()
            step.escalated_to = spec.escalate_to
            step.deadline = iso(now + spec.expires_in)
            step.quorum = 1 + _quorum.people(step, "approved", self.rules)
            step.any_rejection_rejects = True
            self._schedule_reminder(step, spec, now)
            self._audit("escalated", step=step.name, principal=spec.escalate_to)
            await self._offer(step, spec.escalate_to, escalation=True)
            return
        step.status = _quorum.expiry_outcome(spec.on_expiry, step, self.rules)

    def _schedule_reminder(self, step: StepState, spec: ChainStep, now: datetime) -> None:
        step.next_reminder = None
        if spec.remind_every is not None and step.deadline is not None:
            at = now + spec.remind_every
            if at < _at(step.deadline):
                step.next_reminder = iso(at)

    async def _remind(self, step: StepState, spec: ChainStep) -> None:
        assert step.next_reminder is not None and spec.remind_every is not None
        due = _at(step.next_reminder)
        waiting = [s for s in step.slots if s.status == "waiting"]
        self.state.reminders.append(
            Reminder(at=iso(due), step=step.name, principals=[s.assignee for s in waiting])
        )
        await remind(waiting, reminder_text(self.state, step))
        notices = reminder_notices(self.state, step, waiting)
        await tell(notices, self.input.thread_task_queue)
        following = due + spec.remind_every
        deadline = _at(step.deadline) if step.deadline else None
        step.next_reminder = iso(following) if deadline and following < deadline else None

    async def _close_waiting(self, step: StepState) -> None:
        """Withdraw the interrupts nobody needs to answer any more. Under the rules, answers
        the inbox accepted already (promised) are awaited and recorded, not dropped."""
        coming = promised()
        closing = [s for s in step.slots if s.status == "waiting" and s.interrupt_id not in coming]
        close_interrupts([s.interrupt_id for s in closing])  # refused from this moment on
        for slot in closing:
            if slot.status == "waiting":
                slot.status = "closed"
                if not slot.failed:
                    await withdraw(slot, step, self.input.thread_task_queue)
        await record_late(self.state, step, self.rules)

    # -- bookkeeping ------------------------------------------------------------------

    def _audit(self, kind: AuditKind, **fields: Any) -> None:
        audit(self.state, kind, **fields)

    async def _write_audit(self) -> None:
        """In the background, for the whole run: each new line of the trail to the store, in
        order (a send the store refused for an hour is sent again)."""
        while True:
            await workflow.wait_condition(lambda: _audit.unwritten(self.state))
            await _audit.flush(self.state, self.input.thread_task_queue)

    def _index(self) -> None:
        if self.input.index:
            self.published.update(self.state)
