"""The thread workflow: one per AG-UI thread, owner of its transcript and interrupts.

A run is one `run` update. Its validator refuses contract violations without
writing history; its handler re-checks under a lock (so racing resumes cannot
both apply), settles the answered interrupts, lets the agent act, and returns
the run's events. Each `expiresAt` is a durable timer of the main loop.
Settlement and expiry live in `_settlement`, producers' offers and posts in
`_offers`, the contract rules in `_resume`.
"""

from __future__ import annotations

import asyncio
from functools import partial

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from ag_ui.core import PROTOCOL_VERSION, RunErrorEvent, RunStartedEvent
    from temporalio.contrib.workflow_streams import PublishInput

    from ag_ui_temporal.workflows.contract import (
        CANCEL_RUN_UPDATE,
        DROP_RUNS_SIGNAL,
        OFFER_INTERRUPT_SIGNAL,
        POST_MESSAGE_SIGNAL,
        RUN_EVENTS_QUERY,
        RUN_UPDATE,
        SETTLEMENT_QUERY,
        STREAM_PUBLISH_SIGNAL,
        THREAD_QUERY,
        THREAD_WORKFLOW,
        WITHDRAW_INTERRUPT_SIGNAL,
        CancelRun,
        CancelRunResult,
        DropRuns,
        ErrorCode,
        InterruptSettled,
        OfferInterrupt,
        PostMessage,
        RunEventsPage,
        RunEventsQuery,
        RunRequest,
        RunResult,
        SettlementQuery,
        ThreadInput,
        ThreadView,
        WithdrawInterrupt,
        run_digest,
    )
    from ag_ui_temporal.workflows.contract.standing import (
        REVOKE_STANDING_UPDATE,
        UNKNOWN_STANDING,
        RevokeStanding,
        StandingRevoked,
    )
    from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord
    from ag_ui_temporal.workflows.thread.state import THREADS_OWN, RunRecord, ThreadState

from ag_ui_temporal.workflows import patches
from ag_ui_temporal.workflows._common import new_id, should_continue_as_new
from ag_ui_temporal.workflows.thread import (
    _audit,
    _continuation,
    _delivery,
    _offers,
    _runs,
    _settlement,
    _standing,
    _stop,
    _window,
)
from ag_ui_temporal.workflows.thread._log import ThreadLog
from ag_ui_temporal.workflows.thread._meters import InterruptMeter
from ag_ui_temporal.workflows.thread._resume import (
    RunPlan,
    RunRejected,
    check_owner,
    plan_run,
)
from ag_ui_temporal.workflows.thread._settlement import OwnerClosed
from ag_ui_temporal.workflows.thread.agents import Agent, AgentFailed, agent_for
from ag_ui_temporal.workflows.thread.turn import InterruptLimitExceeded, Turn


@workflow.defn(name=THREAD_WORKFLOW)
class ThreadWorkflow:
    @workflow.init
    def __init__(self, input: ThreadInput) -> None:
        self.input = input
        self.log = ThreadLog(
            ThreadState.model_validate(input.carried)
            if input.carried is not None
            else ThreadState(thread_id=input.thread_id, agent=input.agent, owner=input.owner)
        )
        self.agent: Agent = agent_for(input.agent)
        self.run_lock = asyncio.Lock()
        self.meter = InterruptMeter(self.state.interrupts)  # metrics only: no commands
        self.timers_changed = False
        self.offers_waiting = False  # offers only a run of the thread's own would show
        self.audit_due = True  # interrupts changed since the last flush (or carried)
        self.auditing: asyncio.Task[None] | None = None
        self.audit_in_task = input.audit_in_task  # and the last send landed
        self.stopping: _stop.RunStop | None = None  # the run in flight, which `cancel_run` stops
        self.stops: list[_stop.RunStop] = []  # runs accepted and unanswered (waiting: stoppable)

    @property
    def state(self) -> ThreadState:
        return self.log.state

    @workflow.run
    async def run(self, input: ThreadInput) -> None:
        self.offers_waiting = self._offers_to_deliver()  # carried across continue-as-new
        while True:
            self.timers_changed = False
            try:
                await workflow.wait_condition(
                    lambda: (
                        self.timers_changed
                        or self.offers_waiting
                        or self._audit_ready()
                        or self._long()
                    ),
                    timeout=_settlement.next_expiry(self.state.interrupts, workflow.now()),
                )
            except TimeoutError:
                pass
            await self._expire_due()
            await self._deliver_waiting()
            self.meter.observe(self.state.interrupts)
            self._start_audit()
            if self._long():
                await self._ready_to_continue()
                self.log.trim()
                carried = self.state.model_dump(mode="json")
                workflow.continue_as_new(self.input.model_copy(update={"carried": carried}))

    async def _ready_to_continue(self) -> None:
        """Return once the thread may continue as new: no handler going on, what leaves the
        state in the trail and the archive. Sending them awaits activities, and a run may
        come in meanwhile (a resume right after the run that asked): it is let finish, and
        what it changed sent too. Continuing while its update ran would drop the update
        after it had settled its answers: the decision recorded, its run never done. Runs
        sent back to back, with no gap as long as a send to the store, postpone it until a
        gap comes (the history grows meanwhile, far from the server's limit in any chat)."""
        while True:
            await self._quiesce()
            self.audit_due = False  # what a run changes from here on sets it again
            await _audit.flush(self.state)  # what leaves the state is in the trail first
            await _window.archive_before_continuing(self.log, self.run_lock)
            if not self.audit_due and workflow.all_handlers_finished():
                return

    def _long(self) -> bool:
        return should_continue_as_new(self.input.history_limit)

    async def _quiesce(self) -> None:
        await workflow.wait_condition(
            lambda: (
                workflow.all_handlers_finished()
                and not self.run_lock.locked()
                and (self.auditing is None or self.auditing.done())
            )
        )

    # -- the audit trail ---------------------------------------------------------

    def _changed(self) -> None:
        """Interrupts (or standing decisions) changed: their records are due."""
        self.audit_due = True

    def _audit_ready(self) -> bool:
        return (
            self.audit_due
            and (self.auditing is None or self.auditing.done())
            and workflow.all_handlers_finished()
        )

    def _start_audit(self) -> None:
        """Send the records of what changed beside the rest of the workflow (one send at a
        time, so the trail keeps its order: `_flush_audit` says how), once no run or other
        handler is going on: a send started while a run's update completed in the same
        workflow task replays in another order than it ran, and the thread's next task would
        fail on replay for good."""
        if not self._audit_ready():
            return
        self.audit_due = False
        self.auditing = asyncio.ensure_future(self._flush_audit())

    async def _flush_audit(self) -> None:
        # In the task that made the change while the store answers at once; a send that
        # failed there is sent again at once the background way (which waits up to an hour
        # for the store), and so are the sends after it until one lands.
        local = self.audit_in_task and patches.patched(patches.AUDIT_IN_TASK)
        landed = await _audit.flush(self.state, local=local)
        self.audit_in_task = landed and self.input.audit_in_task
        if not landed:
            self.audit_due = True

    # -- runs ------------------------------------------------------------------

    @workflow.update(name=RUN_UPDATE)
    async def run_agent(self, request: RunRequest) -> RunResult:
        if (sent := self._sent_again(request)) is not None:
            await workflow.wait_condition(lambda: sent.finished)
            return _runs.result(self.log, sent, request.fill_snapshots)  # the same POST again
        stop = _stop.RunStop(request.run_id, request.principal)
        self.stops.append(stop)  # a stop may name it while it waits for the lock
        try:
            async with self.run_lock:
                _runs.check_not_dropped(self.state, request)  # dropped while it waited here
                if overdue := _settlement.due(self.state.interrupts, workflow.now()):
                    self._changed()
                    await self._expire(overdue)  # as its timer would: the validator took it so
                plan = self._plan(request, locked=True)
                if rejection := _window.refusal(self.state, request.messages):
                    raise _runs.refusal_error(RunRejected(rejection))
                if plan.replay_of is not None:
                    return _runs.replay_result(self.log, request, plan.replay_of)
                return await self._run(request, plan, stop)
        finally:
            self.stops.remove(stop)
            stop.gone = True

    @run_agent.validator
    def validate_run(self, request: RunRequest) -> None:
        # A re-sent run is answered, not re-checked, but only to the owner; a continuation is
        # checked as a new run is (and, as one, may be a copy of a run the watch dropped).
        known = _continuation.sent_before(self.log, request)
        if known is None or known.continues:
            _runs.check_not_dropped(self.state, request)
        self._plan(request, owner_only=known is not None and not known.continues)
        if known is not None and known.again is None and not known.continues:
            raise _runs.refusal_error(_continuation.reused(request))
        if rejection := _window.refusal(self.state, request.messages):
            raise _runs.refusal_error(RunRejected(rejection))

    def _sent_again(self, request: RunRequest) -> RunRecord | None:
        """The run `request` sends again, or None for a new run (a continuation too); another
        body under a known run id is refused."""
        known = _continuation.sent_before(self.log, request)
        if known is None or known.again is not None:
            return None if known is None else known.again
        if known.continues:
            return None
        raise _runs.refusal_error(_continuation.reused(request))

    def _plan(self, request: RunRequest, owner_only: bool = False, locked: bool = False) -> RunPlan:
        """One plan for the validator and the handler (`locked`). The owner rule (the
        effective owner: it guards `inbox:P` threads that predate owners) is the validator's
        alone: the owner is set when the thread starts and never changes, and a handler runs
        only for an update its validator accepted (replayed, it reruns what was accepted).
        Under the lock the handler re-checks what may have changed while the run waited: its
        interrupts (settled by the run before it, expired, withdrawn, offered) and the runs
        the stuck-thread watch dropped."""
        owner = self.state.effective_owner
        try:
            if owner_only:
                check_owner(owner, self.state.interrupts, request)
                return RunPlan()
            now = workflow.now()
            return plan_run(self.state.agent, self.state.interrupts, request, now, owner, locked)
        except RunRejected as rejected:
            if _delivery.brings_nothing(rejected, self.state, request):
                return RunPlan()  # it delivers the awaiting interrupts again
            raise _runs.refusal_error(rejected, self.state) from None

    @workflow.signal(name=DROP_RUNS_SIGNAL)
    def drop_runs(self, dropped: DropRuns) -> None:
        """The gateway's stuck-thread watch dropped these runs, which kept the thread's task
        failing, and resets the thread to before them: any copy of their update that reaches
        the thread after this is refused. Temporal sends an update-with-start that the reset
        aborted on to the new run; this signal, re-applied there as the run is made, comes
        before any update of its first task, and the SDK runs handlers in that order: this
        one records before it ever yields, so a copy's validator already sees the record."""
        _runs.drop(self.state, dropped.run_ids)

    @workflow.update(name=REVOKE_STANDING_UPDATE)
    def revoke_standing(self, request: RevokeStanding) -> StandingRevoked:
        """Take a standing decision back: the calls it covered ask a person again (the gateway
        decided the caller may act on the thread)."""
        revoked = _standing.revoke(self.state, request.id, request.principal, workflow.now())
        assert revoked is not None  # the validator refused an unknown one
        self._changed()  # its revocation is due in the audit trail
        workflow.logger.info("standing decision %s revoked by %s", request.id, request.principal)
        return StandingRevoked(decision=revoked)

    @revoke_standing.validator
    def validate_revoke_standing(self, request: RevokeStanding) -> None:
        if _standing.revocable(self.state, request.id) is None:
            message = f"no standing decision {request.id[:200]!r} here"
            raise ApplicationError(message, type=UNKNOWN_STANDING, non_retryable=True)

    @workflow.update(name=CANCEL_RUN_UPDATE)
    async def cancel_run(self, request: CancelRun) -> CancelRunResult:
        return await _stop.cancel(self.log, self.stopping, self.stops, request)

    @cancel_run.validator
    def validate_cancel_run(self, request: CancelRun) -> None:
        _stop.check(self.log, self.stops, request)  # unknown, not theirs, ended: refused

    def _open_run(self, run_id: str, parent: str | None, turn: Turn, brings: str) -> RunRecord:
        record = RunRecord(
            run_id=run_id,
            parent_run_id=parent,
            first_offset=self.log.next_offset,
            brings=brings,
            sent_by=turn.principal,
        )
        self.state.runs.append(record)
        started = RunStartedEvent(
            thread_id=self.state.thread_id,
            run_id=self.state.client_run_id(run_id),
            parent_run_id=parent,
            protocol_version=PROTOCOL_VERSION,
        )
        turn.emit(started)
        return record

    async def _run(self, request: RunRequest, plan: RunPlan, stop: _stop.RunStop) -> RunResult:
        run_id = self.log.own_id(request.run_id)
        if run_id != request.run_id:  # a continuation: a run of its own, shown as the client's
            self.state.sent_as[run_id] = request.run_id
        turn = Turn(self.log, run_id, self.input.config, request.principal, request.tools)
        record = self._open_run(run_id, request.parent_run_id, turn, run_digest(request))
        stop.begin(turn)  # stopped while it waited: it ends where its agent would begin
        self.stopping = stop
        indexing = _runs.start_indexing(self.state, record, self.input.index_runs)
        posted = _offers.deliver_posts(self.state, turn)
        try:
            await self._drive(turn, request, plan)
            await _window.archive_overflow(self.state)
            self._finish(turn, posted, len(plan.settle))
        except ActivityError as err:
            workflow.logger.warning("run %s failed: %s", request.run_id, err)
            turn.emit(_runs.activity_failed(err))
        except InterruptLimitExceeded as err:
            _runs.withdraw_asked(self.state, run_id)
            turn.emit(RunErrorEvent(message=str(err), code=ErrorCode.LIMIT_EXCEEDED))
        except OwnerClosed as err:
            turn.emit(RunErrorEvent(message=str(err), code=ErrorCode.INTERRUPT_WITHDRAWN))
        except AgentFailed as err:
            turn.emit(RunErrorEvent(message=str(err), code=ErrorCode.RUN_FAILED))
        except _stop.RunStopped:
            _stop.end_stopped(self.state, stop)
        record.last_offset, record.finished = self.log.next_offset - 1, True
        self.stopping = None
        self.offers_waiting = self.offers_waiting or self._offers_to_deliver()
        self.meter.observe(self.state.interrupts)
        self._changed()
        if indexing is not None:
            await indexing
        return _runs.result(self.log, record, request.fill_snapshots)

    async def _drive(self, turn: Turn, request: RunRequest, plan: RunPlan) -> None:
        """Apply the resume, then answer a new user message if the thread is free."""
        if closed := await _settlement.ask_owners(plan.settle, request.principal):
            for record in closed:
                record.withdraw()  # open, or withdrawn while its owner was asked
            self.timers_changed = True
            raise OwnerClosed([record.id for record in closed])
        new_user_text = _runs.take_new_messages(self.state, request)
        results = self._take_client_results(request)
        # Input is an answer, a new user message or a client tool's result. The client's
        # `state` comes with it; a run without any (a client re-attaching with the state it
        # had, often `{}`) must not replace what the thread holds.
        brought = bool(plan.settle) or new_user_text is not None or results
        if request.state is not None and brought:
            self.state.state = request.state
        assert turn.run_id is not None
        if plan.settle:
            settled = await _settlement.settle(
                self.state.thread_id,
                plan.settle,
                turn.run_id,
                request.principal,
                request.via,
                request.run_id,
            )
            self.timers_changed = any(i.expires_at for i, _ in plan.settle)
            now = workflow.now()
            for record, answer in plan.settle:  # an answer that asks to stand for later calls
                _standing.stand(self.state, record, answer, request.principal, now)
            if settled:  # the agent's own; owners were told theirs
                await _stop.step(self.stopping, partial(self.agent.on_settled, turn, settled))
                await self._go_on_from_standing(turn)
        if self.log.awaiting():
            self._show_awaiting(turn.run_id, plan.partial, brought)
            return
        stop = self.stopping  # the agent acts where a stop can reach it (`_stop`)
        if new_user_text is not None:
            await _stop.step(stop, partial(self.agent.on_user_message, turn, new_user_text))
        elif results:
            await _stop.step(stop, partial(self.agent.on_client_results, turn))
        await self._go_on_from_standing(turn)

    async def _go_on_from_standing(self, turn: Turn) -> None:
        """The agent goes on, in this run, from calls standing decisions answered as it asked
        (and may ask again: each call counts toward `max_interrupts_per_run`, which bounds
        this). One it does not go on from (its batch is gone) ends this."""
        while answered := _standing.answered_at_once(self.state, turn.run_id):
            await _stop.step(self.stopping, partial(self.agent.on_settled, turn, answered))
            if answered == _standing.answered_at_once(self.state, turn.run_id):
                return

    def _show_awaiting(self, run_id: str, partial: bool, brought: bool) -> None:
        """What still awaits an answer as this run ends: the rest of an inbox's partial
        resume stays answerable, bound to this run; a run that `brought` nothing shows the
        awaiting batch again; any other run ends with what its agent asked."""
        if partial:
            _delivery.bind_awaiting(self.log, run_id)
        elif not brought:
            _delivery.bind_to(self.log, run_id)

    def _take_client_results(self, request: RunRequest) -> bool:
        """The client's own tools' results, into the transcript; whether there were any."""
        results = _runs.client_results(self.state, request)
        if not results:
            return False
        self.state.messages.extend(results)
        return True

    def _finish(self, turn: Turn, posted: int = 0, settled: int = 0) -> None:
        """End the run. Interrupts offered by external owners are delivered here: they
        become open, bound to this run, and join its interrupt outcome."""
        assert turn.run_id is not None
        _offers.deliver_offers(self.log, turn.run_id, self.input.config.max_interrupts_per_run)
        self.agent.on_run_end(turn, posted=posted, settled=settled, waiting=self.log.awaiting())
        awaiting = self.log.awaiting()
        self.timers_changed = self.timers_changed or any(i.expires_at for i in awaiting)
        _runs.emit_finished(turn, self.state, awaiting)

    async def _expire_due(self) -> None:
        if not (due := _settlement.due(self.state.interrupts, workflow.now())):
            return
        self._changed()
        async with self.run_lock:
            await self._expire(due)

    async def _expire(self, due: list[InterruptRecord]) -> None:
        """Expire `due` (the caller holds the run lock)."""
        expired = await _settlement.expire(self.state, due)
        if expired:  # the agent's own: it learns of them between runs (no run, no events)
            await self.agent.on_settled(Turn(self.log, None, self.input.config), expired)

    def _offers_to_deliver(self) -> bool:
        return _delivery.deliverable(self.log, self.input.config.max_interrupts_per_run)

    async def _deliver_waiting(self) -> None:
        """A run of the thread's own, so offers are seen before the client sends anything
        (in an inbox, with what awaits already: every waiting item at once)."""
        if not (self.offers_waiting or self._offers_to_deliver()):
            return
        self.offers_waiting = False
        async with self.run_lock:  # after a client run in flight, which may deliver them
            if not _delivery.deliverable(self.log, self.input.config.max_interrupts_per_run):
                return
            # an id no client may send (`contract.server_run_id`: `THREAD_RUN_ID`)
            turn = Turn(self.log, new_id("run"), self.input.config)
            assert turn.run_id is not None
            record = self._open_run(turn.run_id, None, turn, THREADS_OWN)
            _delivery.bind_awaiting(self.log, turn.run_id)  # the batch again, with the offers
            self._finish(turn, _offers.deliver_posts(self.state, turn))
            record.last_offset, record.finished = self.log.next_offset - 1, True
            self._changed()

    # -- producers outside the thread -------------------------------------------

    @workflow.signal(name=OFFER_INTERRUPT_SIGNAL)
    async def offer_interrupt(self, offer: OfferInterrupt) -> None:
        """An external workflow pauses here; shown at once or by the next run (`_delivery`)."""
        limit = self.input.config.max_pending_interrupts
        if not await _offers.admissible(self.log, offer, limit):
            return  # a retried offer, or no valid interrupt (dropped, its owner told)
        if _offers.pending(self.state) >= limit:
            await _offers.refuse(self.state, offer, limit)
            return
        self.log.open_interrupt(_offers.offered_record(offer))
        self._changed()
        self.timers_changed = self.timers_changed or offer.interrupt.get("expiresAt") is not None
        self.offers_waiting = self.offers_waiting or self._offers_to_deliver()
        self.meter.observe(self.state.interrupts)

    @workflow.signal(name=WITHDRAW_INTERRUPT_SIGNAL)
    def withdraw_interrupt(self, withdrawal: WithdrawInterrupt) -> None:
        """The owner took its interrupt back: it leaves the thread (a later resolve naming
        it gets `INTERRUPT_WITHDRAWN`; a cancel naming it is accepted)."""
        if _offers.withdraw(self.log, withdrawal):
            self.timers_changed = True
            self._changed()
            self.meter.observe(self.state.interrupts)

    @workflow.signal(name=STREAM_PUBLISH_SIGNAL)
    def stream_publish(self, batch: PublishInput) -> None:
        """A model activity's deltas, while the model still produces them."""
        self.agent.on_stream(batch)

    @workflow.signal(name=POST_MESSAGE_SIGNAL)
    def post_message(self, post: PostMessage) -> None:
        """A producer's message: in the transcript now, streamed as text on the next run."""
        _offers.post(self.state, post)

    # -- queries ---------------------------------------------------------------

    @workflow.query(name=RUN_EVENTS_QUERY)
    def run_events(self, query: RunEventsQuery) -> RunEventsPage:
        return _runs.events_page(self.log, query)

    @workflow.query(name=SETTLEMENT_QUERY)
    def interrupt_settlement(self, query: SettlementQuery) -> InterruptSettled | None:
        """How this thread settled one of the asker's interrupts (owners trust this)."""
        limit = self.input.config.max_pending_interrupts
        return _settlement.recorded(self.state, query, limit)

    @workflow.query(name=THREAD_QUERY)
    def thread(self) -> ThreadView:
        return self.state.view()
