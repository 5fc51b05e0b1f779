"""`ApprovalChain`: sequential steps, quorum, reminders, expiry and escalation, on producers.

Each step offers one interrupt per approver to the approver's inbox thread
(`inbox:{principal}`, agent `inbox`) with `allowed_resolvers=[principal]`, and
collects the answers the threads route back (`agui_interrupt_settled`). Every
decision lands in the audit trail with who, when, the payload and the resume
metadata; the `chain` query returns it, also after the chain finished. The
search attributes `AguiApprovalPending` / `AguiApprovalParticipants` let the
gateway list what waits for whom, and a small summary in the memo lets it answer
a page of the list without querying each chain. Long chains continue as new with
their state.

Rules (`CHAIN_RULES_PATCH`): only answers the inbox thread recorded count (see
`workflows.producer`); the requester holds no seat and their answers do not count
(unless the definition sets `allow_self_approval`); a quorum counts distinct
people; `delegateTo` must be one of the seat's allowed delegates (the offered
schema lists them, so the thread refuses anything else with `INVALID_PAYLOAD`);
an offer the server refuses leaves a seat that waits for the step's deadline.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.chains import (
        APPROVAL_CHAIN_WORKFLOW,
        APPROVAL_METADATA_KEY,
        APPROVAL_REASON,
        CHAIN_QUERY,
        DECISION_SCHEMA,
        MEMO_KEY,
        AuditEntry,
        ChainInput,
        ChainState,
        ChainStep,
        Reminder,
        Slot,
        StepState,
        chain_summary,
        decision_schema,
        inbox_thread,
    )
    from workflows.contract import (
        APPROVALS_PARTICIPANTS,
        APPROVALS_PENDING,
        POST_MESSAGE_SIGNAL,
        PostMessage,
        thread_workflow_id,
    )

from temporalio.exceptions import ActivityError

from workflows.producer import (
    ThreadInterrupt,
    _iso,
    _settled,
    close_interrupts,
    expect_settlement,
    offer_in_thread,
    post_to_thread,
    promised,
)

CHAIN_RULES_PATCH = "approval-chain-rules"
"""No self-approval, distinct people per quorum, known delegates, surviving failed offers."""
CHAIN_MEMO_PATCH = "approval-chain-memo"
"""The chain's summary in its memo (the gateway's list reads it instead of querying)."""
COUNTED = ("approved", "rejected")
LATE_WAIT = timedelta(minutes=5)
"""How long a closing step waits for answers its inboxes accepted a moment before."""


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
        self.indexed: tuple[list[str], list[str]] | None = None
        self.memo: dict[str, Any] | None = None
        self.rules = False
        self.memo_on = False

    @workflow.query(name=CHAIN_QUERY)
    def chain(self) -> ChainState:
        return self.state

    @workflow.run
    async def run(self, input: ChainInput) -> ChainState:
        _settled()  # hear answers from the first moment (also after continue-as-new)
        self.rules = workflow.patched(CHAIN_RULES_PATCH)
        self.memo_on = input.index and workflow.patched(CHAIN_MEMO_PATCH)
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
        self._audit("completed", decision=state.status)
        self._index()
        if input.requester_thread:
            await post_to_thread(
                input.requester_thread,
                self._outcome_text(),
                agent=input.requester_agent,
                thread_task_queue=input.thread_task_queue,
            )
        return state

    # -- planning ---------------------------------------------------------------

    def _plan(self) -> None:
        definition = self.input.definition
        for step in definition.steps_for(self.state.request):
            approvers = definition.principals(step)
            quorum = step.quorum or len(approvers)
            if self.rules:  # the requester holds no seat; the quorum shrinks with the seats
                approvers = [p for p in approvers if not self._is_requester(p)]
                quorum = max(1, min(quorum, len(approvers)))
            self.state.steps.append(
                StepState(
                    name=step.name,
                    approvers=approvers,
                    quorum=quorum,
                    any_rejection_rejects=step.any_rejection_rejects,
                )
            )
        self._audit("submitted", principal=self.state.requester, payload=self.state.request)

    def _is_requester(self, principal: str | None) -> bool:
        return (
            not self.input.definition.allow_self_approval
            and principal is not None
            and principal == self.state.requester
        )

    def _definition_step(self, name: str) -> ChainStep:
        return next(s for s in self.input.definition.steps if s.name == name)

    # -- one step -----------------------------------------------------------------

    async def _start_step(self, step: StepState, spec: ChainStep) -> None:
        now = workflow.now()
        step.status = "active"
        step.started_at = _iso(now)
        if spec.expires_in is not None:
            step.deadline = _iso(now + spec.expires_in)
        if self.rules and not step.approvers:  # only the requester was named
            step.deadline = _iso(now)  # the expiry rule decides at once
        self._schedule_reminder(step, spec, now)
        self._audit("step", step=step.name, note=f"started: {step.quorum} of {step.approvers}")
        for principal in step.approvers:
            await self._offer(step, principal)

    async def _run_step(self, step: StepState, spec: ChainStep) -> None:
        if step.status == "waiting":
            await self._start_step(step, spec)
        box = _settled()
        while step.status == "active":
            self._apply_answers(step, box)
            await self._offer_delegations(step)
            now = workflow.now()
            past_deadline = step.deadline is not None and now >= _at(step.deadline)
            self._decide(step, expiring=past_deadline)
            if step.status == "active" and past_deadline:
                await self._expire(step, spec)
            self._index()
            if step.status != "active":
                break
            if step.next_reminder is not None and now >= _at(step.next_reminder):
                await self._remind(step, spec, now)
                continue
            if self._should_continue_as_new():
                await workflow.wait_condition(workflow.all_handlers_finished)  # confirmations
                self.state.runs += 1
                workflow.continue_as_new(self.input.model_copy(update={"carried": self.state}))
            wake = [_at(t) for t in (step.deadline, step.next_reminder) if t is not None]
            timeout = max(min(wake) - now, timedelta(milliseconds=1)) if wake else None
            waiting = [s.interrupt_id for s in step.slots if s.status == "waiting"]
            try:
                await workflow.wait_condition(
                    lambda ids=waiting: any(i in box for i in ids),  # type: ignore[misc]
                    timeout=timeout,
                )
            except TimeoutError:
                pass
        step.ended_at = _iso(workflow.now())
        await self._close_waiting(step)
        self._audit("step", step=step.name, decision=step.status)

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
        what = self.state.title
        by = f" from {self.state.requester}" if self.state.requester else ""
        message = f"Approve {what}{by}? (step {step.name!r} of chain {self.state.chain_id})"
        schema = decision_schema(self._delegates(step, principal)) if self.rules else None
        try:
            question = await offer_in_thread(
                inbox_thread(principal),
                reason=APPROVAL_REASON,
                message=message,
                response_schema=schema or DECISION_SCHEMA,
                expires_at=deadline,
                metadata={
                    APPROVAL_METADATA_KEY: {
                        "chainId": self.state.chain_id,
                        "step": step.name,
                        "requester": self.state.requester,
                        "request": self.state.request,
                        **({"delegatedFrom": delegated_from} if delegated_from else {}),
                    }
                },
                allowed_resolvers=[principal],
                thread_task_queue=self.input.thread_task_queue,
            )
        except ActivityError as err:
            if not self.rules:
                raise
            self._failed_offer(step, principal, delegated_from, escalation, err)
            return
        step.slots.append(
            Slot(
                assignee=principal,
                interrupt_id=question.id,
                thread_id=question.thread_id,
                expires_at=question.interrupt.get("expiresAt"),
                delegated_from=delegated_from,
                escalation=escalation,
            )
        )
        self._audit("offered", step=step.name, principal=principal, interrupt_id=question.id)

    def _failed_offer(
        self,
        step: StepState,
        principal: str,
        delegated_from: str | None,
        escalation: bool,
        err: ActivityError,
    ) -> None:
        """The server refused the offer for good: the seat waits, unanswerable, for the step's
        deadline (expiry and escalation still happen)."""
        slot = Slot(
            assignee=principal,
            interrupt_id=f"failed-{workflow.uuid4().hex[:16]}",
            thread_id=inbox_thread(principal),
            delegated_from=delegated_from,
            escalation=escalation,
            failed=True,
        )
        step.slots.append(slot)
        cause = str(err.cause or err)[:300]
        self._audit("refused", step=step.name, principal=principal, note=f"offer failed: {cause}")

    def _delegates(self, step: StepState, principal: str) -> list[str]:
        """Whom `principal`'s seat may delegate to: the principals the definition knows,
        except the requester and anyone seated in (or counted by) the step already."""
        taken = {principal, *(s.assignee for s in step.slots), *step.approvers}
        taken |= {s.answered_by for s in step.slots if s.answered_by}
        return [
            p
            for p in self.input.definition.known_principals()
            if p not in taken and not self._is_requester(p)
        ]

    def _apply_answers(self, step: StepState, box: dict[str, Any]) -> None:
        """Record each newly settled slot once, in the order the answers arrived."""
        arrived = [s for s in step.slots if s.status == "waiting" and s.interrupt_id in box]
        order = list(box)
        for slot in sorted(arrived, key=lambda s: order.index(s.interrupt_id)):
            settled = box[slot.interrupt_id]
            principal = settled.principal or slot.assignee
            if self.rules and settled.status == "resolved" and self._refuse(step, slot, principal):
                continue
            slot.answered_by = principal if self.rules else None
            common: dict[str, Any] = {
                "step": step.name,
                "principal": principal,
                "interrupt_id": slot.interrupt_id,
                "payload": settled.payload,
                "metadata": settled.metadata,
                "run_id": settled.run_id,
            }
            if settled.status == "expired":
                slot.status = "closed"  # the step's own deadline decides what happens
            elif settled.status == "cancelled":
                slot.status = "cancelled"
                self._audit("cancelled", **common)
            else:
                decision = settled.payload["decision"]
                slot.status = {
                    "approve": "approved",
                    "reject": "rejected",
                    "delegate": "delegated",
                }[decision]
                kind = "delegated" if decision == "delegate" else "decision"
                note = settled.payload.get("delegateTo") if decision == "delegate" else None
                self._audit(kind, decision=decision, note=note, **common)  # type: ignore[arg-type]

    def _refuse(self, step: StepState, slot: Slot, principal: str) -> bool:
        """An answer that must not count: the seat closes, the audit says why."""
        counted = {s.answered_by for s in step.slots if s.status in COUNTED}
        payload = _box_payload(slot)
        target = payload.get("delegateTo") if payload.get("decision") == "delegate" else None
        if self._is_requester(principal):
            why = "the requester cannot decide their own request"
        elif principal in counted and payload.get("decision") in ("approve", "reject"):
            why = f"{principal} already counted in this step"
        elif target is not None and target not in self._delegates(step, slot.assignee):
            why = f"cannot delegate to {str(target)[:80]!r}"
        else:
            return False
        slot.status = "closed"
        slot.answered_by = principal
        self._audit(
            "refused", step=step.name, principal=principal, interrupt_id=slot.interrupt_id,
            note=why,
        )  # fmt: skip
        return True

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

    def _decide(self, step: StepState, *, expiring: bool = False) -> None:
        """Apply the quorum. While the step expires, seats the expiry closed do not count
        against it (the expiry rule decides instead: escalate, reject, ...)."""
        approvals = self._people(step, "approved")
        rejections = self._people(step, "rejected")
        waiting = sum(s.status == "waiting" for s in step.slots)
        if approvals >= step.quorum:
            step.status = "approved"
        elif rejections and step.any_rejection_rejects:
            step.status = "rejected"
        elif not expiring and approvals + waiting < step.quorum:
            step.status = "rejected"  # cancelled seats: the quorum can no longer be met

    def _people(self, step: StepState, status: str) -> int:
        """Seats with this answer; under the rules, the distinct people who gave it."""
        slots = [s for s in step.slots if s.status == status]
        if not self.rules:
            return len(slots)
        return len({s.answered_by or s.assignee for s in slots})

    async def _expire(self, step: StepState, spec: ChainStep) -> None:
        self._audit("expired", step=step.name, note=f"expired at {step.deadline}")
        if self.rules and self._is_requester(spec.escalate_to):
            step.status = "rejected"  # the requester cannot be the one who decides
            return
        if spec.on_expiry == "escalate" and step.escalated_to is None:
            assert spec.escalate_to is not None and spec.expires_in is not None
            await self._close_waiting(step)
            now = workflow.now()
            step.escalated_to = spec.escalate_to
            step.deadline = _iso(now + spec.expires_in)
            step.quorum = 1 + self._people(step, "approved")
            step.any_rejection_rejects = True
            self._schedule_reminder(step, spec, now)
            self._audit("escalated", step=step.name, principal=spec.escalate_to)
            await self._offer(step, spec.escalate_to, escalation=True)
            return
        rule = spec.on_expiry
        if self.rules and rule == "approve" and not step.approvers:
            rule = "reject"  # nobody but the requester could have approved it
        step.status = {
            "approve": "approved",
            "cancel": "cancelled",
        }.get(rule, "rejected")  # type: ignore[assignment]

    def _schedule_reminder(self, step: StepState, spec: ChainStep, now: datetime) -> None:
        step.next_reminder = None
        if spec.remind_every is not None and step.deadline is not None:
            at = now + spec.remind_every
            if at < _at(step.deadline):
                step.next_reminder = _iso(at)

    async def _remind(self, step: StepState, spec: ChainStep, now: datetime) -> None:
        assert step.next_reminder is not None and spec.remind_every is not None
        due = _at(step.next_reminder)
        waiting = [s for s in step.slots if s.status == "waiting"]
        self.state.reminders.append(
            Reminder(at=_iso(due), step=step.name, principals=[s.assignee for s in waiting])
        )
        text = (
            f"Reminder: {self.state.title} waits for your decision "
            f"(step {step.name!r}, expires {step.deadline})."
        )

        async def tell(slot: Slot) -> None:
            post = PostMessage(message_id=f"msg-{workflow.uuid4().hex[:16]}", text=text)
            try:
                await workflow.get_external_workflow_handle(
                    thread_workflow_id(slot.thread_id)
                ).signal(POST_MESSAGE_SIGNAL, post)
            except Exception as err:  # the inbox thread is gone: the reminder is best effort
                workflow.logger.warning("reminder to %s not sent: %s", slot.assignee, err)

        await asyncio.gather(*(tell(slot) for slot in waiting))
        following = due + spec.remind_every
        deadline = _at(step.deadline) if step.deadline else None
        step.next_reminder = _iso(following) if deadline and following < deadline else None

    async def _close_waiting(self, step: StepState) -> None:
        """Withdraw the interrupts nobody needs to answer any more. Under the rules, answers
        the inbox accepted already (promised) are awaited and recorded, not dropped."""
        coming = promised() if self.rules else set()
        closing = [s for s in step.slots if s.status == "waiting" and s.interrupt_id not in coming]
        close_interrupts([s.interrupt_id for s in closing])  # refused from this moment on
        for slot in closing:
            if slot.status == "waiting":
                slot.status = "closed"
                if slot.failed:
                    continue
                question = ThreadInterrupt(
                    slot.thread_id,
                    {"id": slot.interrupt_id},
                    None,
                    self.input.thread_task_queue,
                )
                await question.withdraw(f"step {step.name} is {step.status}")
        await self._record_late(step)

    async def _record_late(self, step: StepState) -> None:
        """Answers accepted just before the step closed: into the audit trail (they no longer
        change the step's outcome)."""
        late = [s for s in step.slots if s.status == "waiting"]
        if not late:
            return
        box = _settled()
        try:
            await workflow.wait_condition(
                lambda: all(s.interrupt_id in box for s in late), timeout=LATE_WAIT
            )
        except TimeoutError:
            pass
        self._apply_answers(step, box)
        for slot in late:
            if slot.status == "waiting":  # a promise never kept: the thread's run failed
                slot.status = "closed"
            elif slot.status == "delegated" and step.status != "active":
                slot.status = "closed"  # the step is over: nobody to hand it to

    # -- bookkeeping ------------------------------------------------------------------

    def _audit(self, kind: str, **fields: Any) -> None:
        self.state.audit.append(AuditEntry(at=_iso(workflow.now()), kind=kind, **fields))  # type: ignore[arg-type]

    def _index(self) -> None:
        if not self.input.index:
            return
        pending = sorted(
            {
                slot.assignee
                for step in self.state.steps
                if step.status == "active"
                for slot in step.slots
                if slot.status == "waiting" and not slot.failed
            }
        )
        everyone = sorted(
            {slot.assignee for step in self.state.steps for slot in step.slots if not slot.failed}
        )
        self._upsert_memo()
        if self.indexed == (pending, everyone):
            return
        self.indexed = (pending, everyone)
        workflow.upsert_search_attributes(
            [APPROVALS_PENDING.value_set(pending), APPROVALS_PARTICIPANTS.value_set(everyone)]
        )

    def _upsert_memo(self) -> None:
        if not self.memo_on:
            return
        summary = chain_summary(self.state)
        if summary == self.memo:
            return
        self.memo = summary
        workflow.upsert_memo({MEMO_KEY: summary})

    def _should_continue_as_new(self) -> bool:
        info = workflow.info()
        return (
            info.is_continue_as_new_suggested()
            or info.get_current_history_length() > self.input.history_limit
        )

    def _outcome_text(self) -> str:
        state = self.state
        last = next((e for e in reversed(state.audit) if e.kind == "decision"), None)
        if state.status == "approved":
            return f"Your request {state.title} was approved."
        who = f" by {last.principal}" if last and last.decision == "reject" else ""
        step = state.steps[state.current].name if state.current < len(state.steps) else "?"
        return f"Your request {state.title} was {state.status}{who} (step {step!r})."


def _box_payload(slot: Slot) -> dict[str, Any]:
    answer = _settled().get(slot.interrupt_id)
    payload = answer.payload if answer is not None else None
    return payload if isinstance(payload, dict) else {}
