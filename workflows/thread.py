"""The thread workflow: one per AG-UI thread, owner of its transcript and interrupts.

A run is one `run` update. Its validator refuses contract violations without
writing history; its handler re-checks under a lock (so racing resumes cannot
both apply), settles the answered interrupts, lets the agent act, and returns
the run's events. Each `expiresAt` is a durable timer of the main loop.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from ag_ui.core import (
        PROTOCOL_VERSION,
        AssistantMessage,
        MessagesSnapshotEvent,
        RunErrorEvent,
        RunFinishedEvent,
        RunFinishedInterruptOutcome,
        RunFinishedSuccessOutcome,
        RunStartedEvent,
        StateSnapshotEvent,
        TextMessageContentEvent,
        TextMessageEndEvent,
        TextMessageStartEvent,
    )

    from workflows.contract import (
        ASK_OWNER_ACTIVITY,
        INTERRUPT_SETTLED_SIGNAL,
        OFFER_INTERRUPT_SIGNAL,
        POST_MESSAGE_SIGNAL,
        REFUSED_KEPT,
        RUN_EVENTS_QUERY,
        RUN_IDS,
        RUN_UPDATE,
        SETTLEMENT_QUERY,
        THREAD_QUERY,
        THREAD_WORKFLOW,
        WITHDRAW_INTERRUPT_SIGNAL,
        ErrorCode,
        InterruptClaim,
        InterruptRecord,
        InterruptSettled,
        InterruptStatus,
        OfferInterrupt,
        PostMessage,
        RunEventsPage,
        RunEventsQuery,
        RunRecord,
        RunRequest,
        RunResult,
        SettlementQuery,
        ThreadInput,
        ThreadState,
        WithdrawInterrupt,
    )

from workflows._log import RUNS_KEPT, ThreadLog
from workflows._meters import InterruptMeter
from workflows._resume import RunPlan, RunRejected, check_owner, plan_run
from workflows._turn import InterruptLimitExceeded, Turn, message_text, wire
from workflows.agents import AGENTS, Agent

DELIVERY_LIMIT_PATCH = "interrupts-per-run-delivery"
LAZY_INDEX_PATCH = "index-only-runs-in-flight"
PENDING_LIMIT_PATCH = "pending-interrupts-limit"
ASK_OWNERS_PATCH = "ask-owners-before-settling"
"""An answer to an external owner's interrupt is accepted only if the owner still takes it."""
ASK_OWNER_TIMEOUT = timedelta(seconds=10)
ASK_OWNER_RETRY = RetryPolicy(maximum_attempts=2)


class OwnerClosed(Exception):
    """The owner closed interrupts this run answered: the run changes nothing."""

    def __init__(self, ids: list[str]) -> None:
        super().__init__(f"no longer answerable (its owner closed it): {', '.join(ids)}"[:1000])


@workflow.defn(name=THREAD_WORKFLOW)
class ThreadWorkflow:
    @workflow.init
    def __init__(self, input: ThreadInput) -> None:
        self.input = input
        self.log = ThreadLog(
            input.carried
            or ThreadState(thread_id=input.thread_id, agent=input.agent, owner=input.owner)
        )
        self.agent: Agent = AGENTS[input.agent]()
        self.run_lock = asyncio.Lock()
        self.meter = InterruptMeter(self.state.interrupts)  # metrics only: no commands
        self.timers_changed = False

    @property
    def state(self) -> ThreadState:
        return self.log.state

    @workflow.run
    async def run(self, input: ThreadInput) -> None:
        while True:
            self.timers_changed = False
            try:
                await workflow.wait_condition(
                    lambda: self.timers_changed or self._should_continue_as_new(),
                    timeout=self._until_next_expiry(),
                )
            except TimeoutError:
                pass
            await self._expire_due()
            self.meter.observe(self.state.interrupts)
            if self._should_continue_as_new():
                await workflow.wait_condition(
                    lambda: workflow.all_handlers_finished() and not self.run_lock.locked()
                )
                self.log.trim()
                workflow.continue_as_new(self.input.model_copy(update={"carried": self.state}))

    # -- runs ------------------------------------------------------------------

    @workflow.update(name=RUN_UPDATE)
    async def run_agent(self, request: RunRequest) -> RunResult:
        if (sent := self.log.run(request.run_id)) is not None:
            await workflow.wait_condition(lambda: sent.finished)
            return self._result(sent)  # the same POST again: the same answer, nothing re-applied
        async with self.run_lock:
            plan = self._plan(request, self.state.owner)
            if plan.replay_of is not None:
                return self._replay(request, plan.replay_of)
            return await self._run(request, plan)

    @run_agent.validator
    def validate_run(self, request: RunRequest) -> None:
        # Validators are not replayed: the effective owner also guards `inbox:P` threads
        # that predate owners. A re-sent run is answered, not re-checked, but only to the owner.
        owner = self.state.effective_owner
        if self.log.run(request.run_id) is None:
            self._plan(request, owner)
        else:
            self._plan(request, owner, owner_only=True)

    def _plan(
        self, request: RunRequest, owner: str | None = None, owner_only: bool = False
    ) -> RunPlan:
        """The handler passes the recorded owner only: replays of older histories (no owner)
        take the same path they took."""
        try:
            if owner_only:
                check_owner(owner, self.state.interrupts, request)
                return RunPlan()
            return plan_run(self.state.agent, self.state.interrupts, request, workflow.now(), owner)
        except RunRejected as rejected:
            raise ApplicationError(
                rejected.rejection.message,
                rejected.rejection.model_dump(mode="json"),
                type=rejected.rejection.code,
                non_retryable=True,
            ) from None

    async def _run(self, request: RunRequest, plan: RunPlan) -> RunResult:
        record = RunRecord(
            run_id=request.run_id,
            parent_run_id=request.parent_run_id,
            first_offset=self.log.next_offset,
        )
        self.state.runs.append(record)
        indexing = None
        if self.input.index_runs and workflow.patched("index-run-ids"):
            if workflow.patched(LAZY_INDEX_PATCH):
                indexing = asyncio.ensure_future(self._index_if_in_flight(record))
            else:
                self._index_runs()
        turn = Turn(self.log, request.run_id, self.input.config, request.principal)
        turn.emit(
            RunStartedEvent(
                thread_id=self.state.thread_id,
                run_id=request.run_id,
                parent_run_id=request.parent_run_id,
                protocol_version=PROTOCOL_VERSION,
            )
        )
        posted = self._deliver_posts(turn)
        try:
            await self._drive(turn, request, plan)
            self._finish(turn, posted, len(plan.settle))
        except ActivityError as err:
            workflow.logger.warning("run %s failed: %s", request.run_id, err)
            turn.emit(
                RunErrorEvent(
                    message="a tool failed; see the worker logs", code=ErrorCode.RUN_FAILED
                )
            )
        except InterruptLimitExceeded as err:
            self._withdraw_asked(request.run_id)
            turn.emit(RunErrorEvent(message=str(err), code=ErrorCode.LIMIT_EXCEEDED))
        except OwnerClosed as err:
            turn.emit(RunErrorEvent(message=str(err), code=ErrorCode.INTERRUPT_WITHDRAWN))
        record.last_offset = self.log.next_offset - 1
        record.finished = True
        self.meter.observe(self.state.interrupts)
        if indexing is not None:
            await indexing
        return self._result(record)

    async def _index_if_in_flight(self, record: RunRecord) -> None:
        """Index the run if it outlives the workflow task that started it (it waits for a
        tool, a signal, a timer): only such a run can be joined while it goes on. Most
        runs end in their first task and skip the write. Conditions are checked once
        nothing else can run, so this one sees how far the run got in this task (and
        sees it the same way on replay)."""
        await workflow.wait_condition(lambda: True)
        if not record.finished:
            self._index_runs()

    def _index_runs(self) -> None:
        """Record the recent run ids in `AguiRunIds`, where the gateway finds a run's thread
        by the run id alone (a visibility write: the server's largest cost of a run)."""
        recent = [run.run_id for run in self.state.runs[-RUNS_KEPT:]]
        workflow.upsert_search_attributes([RUN_IDS.value_set(recent)])

    async def _drive(self, turn: Turn, request: RunRequest, plan: RunPlan) -> None:
        """Apply the resume, then answer a new user message if the thread is free."""
        await self._ask_owners(plan, request.principal)
        new_user_text = self._take_new_messages(request)
        if request.state is not None:
            self.state.state = request.state
        if plan.settle:
            for interrupt, answer in plan.settle:
                interrupt.resolution = answer
                interrupt.resolved_by_run = request.run_id
                interrupt.resolved_by = request.principal
                if interrupt.status == InterruptStatus.OPEN:
                    interrupt.status = InterruptStatus(answer.status)
            self.timers_changed = any(i.expires_at for i, _ in plan.settle)
            answered = [
                i
                for i, _ in plan.settle
                if i.status in (InterruptStatus.RESOLVED, InterruptStatus.CANCELLED)
            ]
            await self._tell_owners([i for i in answered if i.owner is not None], request.run_id)
            agent_settled = [
                i
                for i, a in plan.settle
                if i.status not in (InterruptStatus.EXPIRED, InterruptStatus.WITHDRAWN)
                and i.owner is None
            ]
            if agent_settled:
                await self.agent.on_settled(turn, agent_settled)
        if new_user_text is not None and not self.log.awaiting():
            await self.agent.on_user_message(turn, new_user_text)

    async def _ask_owners(self, plan: RunPlan, principal: str | None) -> None:
        """Before an answer to an external owner's interrupt is accepted, the owner says
        whether it still takes it (it may have closed the seat a moment ago). Refused ones
        are withdrawn and the run fails with `INTERRUPT_WITHDRAWN`, changing nothing else."""
        asked = [
            record
            for record, answer in plan.settle
            if record.owner is not None
            and answer.status == "resolved"
            and record.status == InterruptStatus.OPEN
        ]
        if not asked or not workflow.patched(ASK_OWNERS_PATCH):
            return

        async def takes(record: InterruptRecord) -> bool:
            assert record.owner is not None
            claim = InterruptClaim(
                interrupt_id=record.id, owner_workflow_id=record.owner, principal=principal
            )
            try:
                return await workflow.execute_activity(
                    ASK_OWNER_ACTIVITY,
                    claim,
                    result_type=bool,
                    start_to_close_timeout=ASK_OWNER_TIMEOUT,
                    retry_policy=ASK_OWNER_RETRY,
                )
            except ActivityError as err:  # the owner is slow or unreachable: it decides later
                workflow.logger.warning("owner of %s not asked: %s", record.id, err)
                return True

        answers = await asyncio.gather(*(takes(record) for record in asked))
        closed = [
            record
            for record, ok in zip(asked, answers, strict=True)
            if not ok or record.status != InterruptStatus.OPEN  # withdrawn while asking
        ]
        if not closed:
            return
        for record in closed:
            record.status = InterruptStatus.WITHDRAWN
        self.timers_changed = True
        raise OwnerClosed([record.id for record in closed])

    def _take_new_messages(self, request: RunRequest) -> str | None:
        """Append client messages the thread has not seen; return the last new user text."""
        known = {message.get("id") for message in self.state.messages}
        text = None
        for message in request.messages:
            if message.get("id") in known or message.get("role") != "user":
                continue
            self.state.messages.append(message)
            text = message_text(message)
        return text

    def _finish(self, turn: Turn, posted: int = 0, settled: int = 0) -> None:
        """End the run; the snapshots make the transcript authoritative for any client
        (also one that joined mid-run and dropped what it had hydrated).

        Interrupts offered by external owners are delivered here: they become open,
        bound to this run, and join its interrupt outcome."""
        assert turn.run_id is not None
        self._deliver_offers(turn.run_id)
        on_run_end = getattr(self.agent, "on_run_end", None)
        if on_run_end is not None:
            on_run_end(turn, posted=posted, settled=settled, waiting=self.log.awaiting())
        awaiting = self.log.awaiting()
        outcome: RunFinishedInterruptOutcome | RunFinishedSuccessOutcome
        if awaiting:
            self.timers_changed = self.timers_changed or any(i.expires_at for i in awaiting)
            outcome = RunFinishedInterruptOutcome(interrupts=[i.interrupt for i in awaiting])
        else:
            outcome = RunFinishedSuccessOutcome()
        turn.emit(StateSnapshotEvent(snapshot=self.state.state))
        turn.emit(MessagesSnapshotEvent(messages=self.state.messages))
        turn.emit(
            RunFinishedEvent(thread_id=self.state.thread_id, run_id=turn.run_id, outcome=outcome)
        )

    def _deliver_offers(self, run_id: str) -> None:
        """Offered interrupts open, bound to this run, up to the per-run limit (so one
        resume can answer the batch); the rest wait, in order, for the next run."""
        offered = [r for r in self.state.interrupts if r.status == InterruptStatus.OFFERED]
        room = self.input.config.max_interrupts_per_run - len(self.log.awaiting())
        if len(offered) > room and workflow.patched(DELIVERY_LIMIT_PATCH):
            offered = offered[: max(room, 0)]
        for record in offered:
            record.status = InterruptStatus.OPEN
            record.run_id = run_id

    def _withdraw_asked(self, run_id: str) -> None:
        """A run refused for asking too much leaves no interrupt of its own awaited."""
        for record in self.state.interrupts:
            if record.run_id == run_id and record.owner is None:
                record.status = InterruptStatus.WITHDRAWN

    def _result(self, record: RunRecord) -> RunResult:
        return RunResult(
            events=self.log.events_between(record.first_offset, record.last_offset),
            first_offset=record.first_offset,
            owner=self.state.effective_owner,
        )

    def _replay(self, request: RunRequest, run_id: str) -> RunResult:
        """A repeated resume: the outcome of the run that applied it, under the new run id."""
        original = self.log.run(run_id)
        assert original is not None
        events = []
        for event in self._result(original).events:
            if "runId" in event:
                event = {**event, "runId": request.run_id}
            if event.get("type") == "RUN_STARTED":
                event = {**event, "parentRunId": request.parent_run_id}
                event = {k: v for k, v in event.items() if v is not None}
            events.append(event)
        return RunResult(
            events=events, first_offset=original.first_offset, owner=self.state.effective_owner
        )

    # -- expiry ----------------------------------------------------------------

    def _until_next_expiry(self) -> timedelta | None:
        deadlines = [
            datetime.fromisoformat(i.expires_at)
            for i in self.state.interrupts
            if i.status in (InterruptStatus.OPEN, InterruptStatus.OFFERED)
            and i.expires_at is not None
        ]
        if not deadlines:
            return None
        return max(min(deadlines) - workflow.now(), timedelta(milliseconds=1))

    async def _expire_due(self) -> None:
        now = workflow.now()
        due = [
            i
            for i in self.state.interrupts
            if i.status in (InterruptStatus.OPEN, InterruptStatus.OFFERED)
            and i.expires_at is not None
            and datetime.fromisoformat(i.expires_at) <= now
        ]
        if not due:
            return
        async with self.run_lock:
            due = [i for i in due if i.status in (InterruptStatus.OPEN, InterruptStatus.OFFERED)]
            for interrupt in due:
                interrupt.status = InterruptStatus.EXPIRED
            await self._tell_owners([i for i in due if i.owner is not None], None)
            agents = [i for i in due if i.owner is None]
            if agents:
                await self.agent.on_settled(Turn(self.log, None, self.input.config), agents)

    # -- producers outside the thread -------------------------------------------

    @workflow.signal(name=OFFER_INTERRUPT_SIGNAL)
    async def offer_interrupt(self, offer: OfferInterrupt) -> None:
        """An external workflow pauses here; the thread's next run delivers the interrupt."""
        interrupt = offer.interrupt
        if self.log.interrupt(str(interrupt["id"])) is not None:
            return  # a retried offer
        if self._pending() >= self.input.config.max_pending_interrupts and workflow.patched(
            PENDING_LIMIT_PATCH
        ):
            await self._refuse_offer(offer)
            return
        self.log.open_interrupt(
            InterruptRecord(
                interrupt=interrupt,
                run_id="",
                status=InterruptStatus.OFFERED,
                expires_at=interrupt.get("expiresAt"),
                owner=offer.owner_workflow_id,
                allowed_resolvers=offer.allowed_resolvers,
            )
        )
        self.timers_changed = self.timers_changed or interrupt.get("expiresAt") is not None
        self.meter.observe(self.state.interrupts)

    def _pending(self) -> int:
        pending = (InterruptStatus.OPEN, InterruptStatus.OFFERED)
        return sum(1 for r in self.state.interrupts if r.status in pending)

    async def _refuse_offer(self, offer: OfferInterrupt) -> None:
        """A full thread takes no more offers: the owner hears `cancelled` at once, marked in
        the reserved namespace (no client can send that), instead of waiting in vain."""
        settled = self._refusal(str(offer.interrupt["id"]))
        workflow.logger.warning("offer %s refused: thread is full", settled.interrupt_id)
        self.state.refused[settled.interrupt_id] = offer.owner_workflow_id
        while len(self.state.refused) > REFUSED_KEPT:  # oldest first (dicts keep order)
            del self.state.refused[next(iter(self.state.refused))]
        try:
            await workflow.get_external_workflow_handle(offer.owner_workflow_id).signal(
                INTERRUPT_SETTLED_SIGNAL, settled
            )
        except Exception as err:  # the owner is gone
            workflow.logger.warning("owner %s not told: %s", offer.owner_workflow_id, err)

    def _refusal(self, interrupt_id: str) -> InterruptSettled:
        limit = self.input.config.max_pending_interrupts
        return InterruptSettled(
            interrupt_id=interrupt_id,
            thread_id=self.state.thread_id,
            status="cancelled",
            metadata={
                "ag-ui": {
                    "refused": ErrorCode.LIMIT_EXCEEDED.value,
                    "message": f"the thread already holds {limit} pending interrupts",
                }
            },
        )

    @workflow.signal(name=WITHDRAW_INTERRUPT_SIGNAL)
    def withdraw_interrupt(self, withdrawal: WithdrawInterrupt) -> None:
        """The owner took its interrupt back: it leaves the thread (a later resolve naming
        it gets `INTERRUPT_WITHDRAWN`; a cancel naming it is accepted)."""
        record = self.log.interrupt(withdrawal.interrupt_id)
        if record is None or record.owner != withdrawal.owner_workflow_id:
            return
        if record.status in (InterruptStatus.OFFERED, InterruptStatus.OPEN) or (
            record.status == InterruptStatus.EXPIRED and record.resolution is None
        ):
            record.status = InterruptStatus.WITHDRAWN
            self.timers_changed = True
            self.meter.observe(self.state.interrupts)

    @workflow.signal(name=POST_MESSAGE_SIGNAL)
    def post_message(self, post: PostMessage) -> None:
        """A producer's message: in the transcript now, streamed as text on the next run."""
        if any(m.get("id") == post.message_id for m in self.state.messages):
            return
        self.state.messages.append(wire(AssistantMessage(id=post.message_id, content=post.text)))
        self.state.undelivered_posts.append(post.message_id)

    def _deliver_posts(self, turn: Turn) -> int:
        """Stream the messages producers posted since the last run; return how many."""
        if not self.state.undelivered_posts:
            return 0
        by_id = {m.get("id"): m for m in self.state.messages}
        ids, self.state.undelivered_posts = self.state.undelivered_posts, []
        for message_id in ids:
            text = message_text(by_id.get(message_id) or {})
            turn.emit(TextMessageStartEvent(message_id=message_id, role="assistant"))
            turn.emit(TextMessageContentEvent(message_id=message_id, delta=text or " "))
            turn.emit(TextMessageEndEvent(message_id=message_id))
        return len(ids)

    async def _tell_owners(self, records: list[InterruptRecord], run_id: str | None) -> None:
        """Route each settled interrupt to its owner workflow, and only to it."""
        if not records:
            return

        async def tell(record: InterruptRecord) -> None:
            assert record.owner is not None
            settled = self._settlement(record, run_id)
            try:
                await workflow.get_external_workflow_handle(record.owner).signal(
                    INTERRUPT_SETTLED_SIGNAL, settled
                )
            except Exception as err:  # the owner is gone (finished, terminated)
                workflow.logger.warning("owner %s not told of %s: %s", record.owner, record.id, err)

        await asyncio.gather(*(tell(record) for record in records))

    def _settlement(self, record: InterruptRecord, run_id: str | None) -> InterruptSettled:
        answer = record.resolution
        return InterruptSettled(
            interrupt_id=record.id,
            thread_id=self.state.thread_id,
            status=record.status.value,  # type: ignore[arg-type]
            payload=answer.payload if answer is not None else None,
            metadata=answer.metadata if answer is not None else None,
            run_id=run_id,
            principal=record.resolved_by if answer is not None else None,
        )

    def _should_continue_as_new(self) -> bool:
        info = workflow.info()
        return (
            info.is_continue_as_new_suggested()
            or info.get_current_history_length() > self.input.history_limit
        )

    # -- queries ---------------------------------------------------------------

    @workflow.query(name=RUN_EVENTS_QUERY)
    def run_events(self, query: RunEventsQuery) -> RunEventsPage:
        run = self.log.run(query.run_id)
        if run is None or run.first_offset < self.state.events_start:
            return RunEventsPage(
                found=False, owner=self.state.effective_owner, agent=self.state.agent
            )
        first = max(query.after + 1, run.first_offset)
        last = run.last_offset if run.finished else self.log.next_offset - 1
        return RunEventsPage(
            found=True,
            events=self.log.events_between(first, last),
            first_offset=first,
            finished=run.finished,
            owner=self.state.effective_owner,
            agent=self.state.agent,
        )

    @workflow.query(name=SETTLEMENT_QUERY)
    def interrupt_settlement(self, query: SettlementQuery) -> InterruptSettled | None:
        """How this thread settled one of the asker's interrupts (None: it did not, or the
        interrupt is not the asker's): owners trust this, not the signal they heard."""
        if self.state.refused.get(query.interrupt_id) == query.owner_workflow_id:
            return self._refusal(query.interrupt_id)
        record = self.log.interrupt(query.interrupt_id)
        settled = (InterruptStatus.RESOLVED, InterruptStatus.CANCELLED, InterruptStatus.EXPIRED)
        if record is None or record.owner != query.owner_workflow_id:
            return None
        if record.status not in settled:
            return None
        return self._settlement(record, record.resolved_by_run)

    @workflow.query(name=THREAD_QUERY)
    def thread(self) -> ThreadState:
        return self.state.model_copy(update={"events": []})
