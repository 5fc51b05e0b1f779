"""Pause any Temporal workflow in an AG-UI chat thread: the owner-side API.

Inside your own workflow:

    from ag_ui_temporal.workflows.producers import ask_in_thread

    outcome = await ask_in_thread(
        "T", message="Ship order 42 how?", response_schema=SCHEMA, expires_in=timedelta(days=2)
    )
    if outcome.status == "resolved": ...   # outcome.payload is the client's answer

The interrupt is offered to thread T (signal-with-start: a thread a producer
creates belongs to the `inbox` agent unless `agent=` names another). The
thread delivers it at once by a run of its own (while other interrupts await
there, with the run that answers them), bound to that run, so a client that
hydrates the thread sees it; the client's answer is routed back to this
workflow, and only to it, as the `agui_interrupt_settled` signal. This workflow
waits with its own durable timer for `expiresAt`, so it learns of the expiry
even if the thread never runs again.

The signal is sent by an activity on the thread workers' task queue
(`thread_task_queue`, default `TASK_QUEUE`): the thread worker registers it,
your worker registers nothing extra. Every call must run in workflow code.

A settlement signal is only a claim (anyone with access to Temporal can send
one): the owner confirms it against the thread's own record (the
`agui_confirm_settled` activity queries the thread it offered to) and keeps
what the thread recorded (status, payload, who answered). A claim the thread
does not confirm is dropped; a later genuine one still counts. An `expired`
claim is ignored: the owner's own timer for `expiresAt` decides. Owners that
continue as new call `expect_settlement` for the interrupts they still wait on.

Before the thread accepts an answer it asks the owner (the `agui_interrupt_claim`
update): an interrupt this workflow withdrew is refused there, so its approver
gets `INTERRUPT_WITHDRAWN` instead of a success nobody counts; one it accepted is
promised (`promised()`), and a withdrawal no longer takes it back.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, Unpack

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.workflows.contract import (
        OFFER_INTERRUPT_SIGNAL,
        POST_MESSAGE_SIGNAL,
        SIGNAL_THREAD_ACTIVITY,
        TASK_QUEUE,
        WITHDRAW_INTERRUPT_SIGNAL,
        DecisionVia,
        OfferedFields,
        OfferInterrupt,
        OfferRefusal,
        PostMessage,
        ThreadSignal,
        WireDict,
        WithdrawInterrupt,
        offer_refusal,
    )

from ag_ui_temporal.workflows._common import new_id
from ag_ui_temporal.workflows._interrupt import (
    InvalidInterrupt,
    interrupt_problem,
    new_interrupt,
)
from ag_ui_temporal.workflows.producers.owner import (
    SIGNAL_RETRY,
    SIGNAL_TIMEOUT,
    close_interrupts,
    expect_settlement,
    promised,
    recorded_at_deadline,
    settled_box,
)


@dataclass
class InterruptOutcome:
    """How an interrupt ended, from its owner's side.

    A workflow may keep or return it: a field added later has a default, so one serialized
    before it was added still reads."""

    interrupt_id: str
    status: Literal["resolved", "cancelled", "expired", "withdrawn"]
    payload: Any = None
    metadata: dict[str, Any] | None = None
    refused: OfferRefusal | None = None
    """Set when the thread refused the offer (`cancelled`): full (`LIMIT_EXCEEDED`), or no
    valid interrupt (`INVALID_OFFER`); read from either key a thread has written it under."""
    principal: str | None = None
    """Who answered (`resolved` or `cancelled` by a person), as the thread recorded it and
    its audit trail's `answered` record names them. None when no person decided: `expired`
    (the deadline), `withdrawn` (this workflow), a refused offer (the thread); also for a
    run sent to the thread past the gateway without one (the gateway always names one:
    `anonymous` under `AUTH_MODE=none`)."""
    via: DecisionVia | None = None
    """How that answer came: `chat` (an AG-UI resume, any chat client), `link` (a signed
    decision link), `api` (`POST /interrupts/{id}`), `cli` (`ag-ui-temporal approvals`), as
    the `answered` record's `data.via`. None whenever `principal` is None for want of a
    person, and for an answer from a thread of a version before it recorded how."""


async def _signal_thread(
    thread_id: str,
    signal: str,
    arg: WireDict,
    *,
    agent: str,
    task_queue: str,
    start: bool,
    thread_owner: str | None = None,
) -> None:
    request = ThreadSignal(
        thread_id=thread_id,
        agent=agent,
        signal=signal,
        arg=arg,
        start=start,
        thread_owner=thread_owner,
    )
    await workflow.execute_activity(
        SIGNAL_THREAD_ACTIVITY,
        # JSON, not the model: a producer's worker may run temporalio's default converter,
        # which takes pydantic models only through pydantic v1's deprecated methods
        request.model_dump(mode="json"),
        task_queue=task_queue,
        start_to_close_timeout=SIGNAL_TIMEOUT,
        retry_policy=SIGNAL_RETRY,
    )


class ThreadInterrupt:
    """An interrupt this workflow offered to a thread: wait for it, or withdraw it."""

    def __init__(
        self, thread_id: str, interrupt: WireDict, deadline: datetime | None, task_queue: str
    ) -> None:
        self.thread_id = thread_id
        self.interrupt = interrupt
        self.deadline = deadline
        self.task_queue = task_queue
        self._withdrawn = False

    @property
    def id(self) -> str:
        return str(self.interrupt["id"])

    def settled(self) -> InterruptOutcome | None:
        """The outcome if it is known already (never blocks)."""
        if self._withdrawn:
            return InterruptOutcome(self.id, "withdrawn")
        answer = settled_box().get(self.id)
        if answer is not None:
            return InterruptOutcome(
                self.id,
                answer.status,
                answer.payload,
                answer.metadata,
                offer_refusal(answer),
                principal=answer.principal,
                via=answer.via,
            )
        if self.deadline is not None and workflow.now() >= self.deadline:
            return InterruptOutcome(self.id, "expired")
        return None

    async def outcome(self) -> InterruptOutcome:
        """Wait for the answer; the owner's own durable timer bounds the wait by `expiresAt`
        (then the thread's record decides: an answer it accepted counts, though its
        settlement signal never arrived)."""
        box = settled_box()
        timeout = None
        if self.deadline is not None:
            timeout = max(self.deadline - workflow.now(), timedelta(milliseconds=1))
        try:
            await workflow.wait_condition(
                lambda: self.id in box or self._withdrawn, timeout=timeout
            )
        except TimeoutError:
            pass
        if self.id not in box and not self._withdrawn:
            if await recorded_at_deadline(self.id, self.thread_id) is None:
                return InterruptOutcome(self.id, "expired")
        outcome = self.settled()
        assert outcome is not None
        return outcome

    async def withdraw(self, reason: str | None = None) -> None:
        """Take the offer back (the decision was made elsewhere): it leaves the thread.

        An answer the thread accepted before the withdrawal arrived still counts:
        check `settled()` afterwards if that matters."""
        if self.id in settled_box() or self.id in promised():
            return  # answered: the outcome is (or is about to be) in the settled box
        close_interrupts([self.id])
        self._withdrawn = True
        withdrawal = WithdrawInterrupt(
            owner_workflow_id=workflow.info().workflow_id, interrupt_id=self.id, reason=reason
        )
        await _signal_thread(
            self.thread_id,
            WITHDRAW_INTERRUPT_SIGNAL,
            withdrawal.model_dump(mode="json"),
            agent="inbox",
            task_queue=self.task_queue,
            start=False,
        )


async def offer_in_thread(
    thread_id: str,
    *,
    message: str,
    reason: str = "input_required",
    expires_in: timedelta | None = None,
    expires_at: datetime | None = None,
    allowed_resolvers: list[str] | None = None,
    agent: str = "inbox",
    thread_task_queue: str = TASK_QUEUE,
    thread_owner: str | None = None,
    **fields: Unpack[OfferedFields],
) -> ThreadInterrupt:
    """Offer an interrupt to thread `thread_id` (starting the thread if needed).

    `allowed_resolvers`: principals, or `group:G` for any member of group G (None: anyone
    who may run the thread). `thread_owner`: who the thread belongs to if this offer
    starts it (None: unowned; `inbox:P` is always P's). `fields`: the interrupt's
    `response_schema`, `metadata` and `subagent_run_id` (the run of the sub-agent on whose
    behalf this asks, which clients show), as the contract lists them (`OfferedFields`).

    An offer that cannot become a valid interrupt fails this workflow (non-retryable
    `ApplicationError`) and never reaches the thread: type `INVALID_REASON` for a reason
    that is neither core (`tool_call`, `input_required`, `confirmation`) nor namespaced
    `<framework>:<name>` (never `core:`), `INVALID_RESPONSE_SCHEMA` for a schema that is no
    2020-12 schema object, `INVALID_OFFER` for an empty message, a naive `expires_at` or a
    `subagent_run_id` that is empty or longer than 256 characters.
    A `confirmation` without a schema expects `{"type": "boolean"}`."""
    settled_box()  # listen before offering
    deadline = expires_at
    if expires_in is not None:
        deadline = workflow.now() + expires_in
    try:
        interrupt = new_interrupt(reason=reason, message=message, expires_at=deadline, **fields)
        # the thread's own check of an offer: what fails it never leaves this workflow
        if problem := interrupt_problem(interrupt):
            raise problem
    except InvalidInterrupt as err:  # refused here, before the thread sees it
        raise ApplicationError(str(err), type=err.error_type, non_retryable=True) from None
    offer = OfferInterrupt(
        owner_workflow_id=workflow.info().workflow_id,
        interrupt=interrupt,
        allowed_resolvers=allowed_resolvers,
    )
    expect_settlement(str(interrupt["id"]), thread_id, thread_task_queue)
    await _signal_thread(
        thread_id,
        OFFER_INTERRUPT_SIGNAL,
        offer.model_dump(mode="json"),
        agent=agent,
        task_queue=thread_task_queue,
        start=True,
        thread_owner=thread_owner,
    )
    return ThreadInterrupt(thread_id, interrupt, deadline, thread_task_queue)


async def ask_in_thread(thread_id: str, **offer: Any) -> InterruptOutcome:
    """Offer an interrupt (arguments as `offer_in_thread`) and wait for its outcome."""
    return await (await offer_in_thread(thread_id, **offer)).outcome()


async def post_to_thread(
    thread_id: str,
    text: str,
    *,
    agent: str = "inbox",
    thread_task_queue: str = TASK_QUEUE,
    thread_owner: str | None = None,
) -> str:
    """Post an assistant message to a thread; the client gets it on its next run. Returns its id.
    `thread_owner` as for `offer_in_thread`."""
    post = PostMessage(message_id=new_id("msg"), text=text)
    await _signal_thread(
        thread_id,
        POST_MESSAGE_SIGNAL,
        post.model_dump(mode="json"),
        agent=agent,
        task_queue=thread_task_queue,
        start=True,
        thread_owner=thread_owner,
    )
    return post.message_id
