"""The activity producers use to reach a thread: signal-with-start, on the thread's worker.

A workflow cannot signal-with-start another workflow, so `workflows.producers`
calls this activity with `task_queue=` the thread workers' queue: the thread
worker (`worker.py`) registers it, and the producer's own worker needs nothing
extra. Retries are safe: the thread ignores an offer or post whose id it has.
Errors no retry can fix (an invalid workflow id, a payload the server refuses) are
non-retryable, so the producer hears of them at once instead of waiting forever.

An offer that names who may answer it (`allowed_resolvers`) is also the moment those people
are told something waits for them (`ag_ui_temporal.notify`): once per interrupt and person,
also when the activity is retried.

`confirm_settled` is the owner's side of the same trust: a settlement signal is a
claim until the thread's own record (`interrupt_settlement` query) confirms it.
"""

from __future__ import annotations

from typing import Any

from temporalio import activity
from temporalio.client import (
    Client,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from ag_ui_temporal.notify.activities import Notifier
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import (
    ASK_OWNER_ACTIVITY,
    CLAIM_UPDATE,
    CONFIRM_SETTLED_ACTIVITY,
    SETTLEMENT_QUERY,
    SIGNAL_THREAD_ACTIVITY,
    THREAD_WORKFLOW,
    InterruptClaim,
    InterruptSettled,
    SettlementQuery,
    ThreadSignal,
    thread_input,
    thread_memo,
    thread_workflow_id,
)

PERMANENT = (
    RPCStatusCode.INVALID_ARGUMENT,
    RPCStatusCode.FAILED_PRECONDITION,
    RPCStatusCode.PERMISSION_DENIED,
    RPCStatusCode.OUT_OF_RANGE,
    RPCStatusCode.UNIMPLEMENTED,
)
"""RPC failures a retry cannot fix (e.g. a 1,500-character thread id): non-retryable."""


def _permanent(err: RPCError) -> ApplicationError:
    return ApplicationError(
        f"{err.status.name if err.status else 'error'}: {err.message}"[:500],
        type="ThreadSignalRefused",
        non_retryable=True,
    )


class ThreadSignals:
    def __init__(self, client: Client, settings: Settings, notifier: Notifier | None = None):
        self.client = client
        self.settings = settings
        self.notifier = notifier

    @activity.defn(name=SIGNAL_THREAD_ACTIVITY)
    async def signal_thread(self, request: ThreadSignal) -> None:
        try:
            await self._signal(request)
            if self.notifier is not None:
                await self.notifier.offered(request)
        except RPCError as err:
            if err.status in PERMANENT:
                raise _permanent(err) from None
            raise

    async def _signal(self, request: ThreadSignal) -> None:
        workflow_id = thread_workflow_id(request.thread_id)
        if request.start:
            start = thread_input(
                self.settings, request.agent, request.thread_id, request.thread_owner
            )
            await self.client.start_workflow(
                THREAD_WORKFLOW,
                start,
                id=workflow_id,
                task_queue=self.settings.task_queue,
                task_timeout=self.settings.thread_task_timeout,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                start_signal=request.signal,
                start_signal_args=[request.arg],
                memo=thread_memo(start.owner, start.agent),  # who may see it, without a query
            )
            return
        handle: WorkflowHandle[Any, Any] = self.client.get_workflow_handle(workflow_id)
        try:
            await handle.signal(request.signal, request.arg)
        except RPCError as err:
            if err.status != RPCStatusCode.NOT_FOUND:
                raise

    @activity.defn(name=CONFIRM_SETTLED_ACTIVITY)
    async def confirm_settled(self, request: SettlementQuery) -> InterruptSettled | None:
        """The thread's own record of the owner's interrupt (None: not settled there, not the
        owner's, or no such thread): what the owner may trust."""
        handle = self.client.get_workflow_handle(thread_workflow_id(request.thread_id))
        try:
            settled: InterruptSettled | None = await handle.query(
                SETTLEMENT_QUERY,
                request.model_copy(update={"thread_id": ""}),
                # temporalio types `result_type` as a class; its converter takes any type hint
                result_type=InterruptSettled | None,  # type: ignore[arg-type]
            )
            return settled
        except WorkflowQueryFailedError:  # a thread from before the query existed
            return None
        except RPCError as err:
            if err.status in (RPCStatusCode.NOT_FOUND, *PERMANENT):
                return None
            raise

    @activity.defn(name=ASK_OWNER_ACTIVITY)
    async def ask_owner(self, claim: InterruptClaim) -> bool:
        """Whether the owner still takes an answer to its interrupt (False: it closed it, or
        the owner is gone and nobody would count the answer)."""
        handle = self.client.get_workflow_handle(claim.owner_workflow_id)
        try:
            return bool(await handle.execute_update(CLAIM_UPDATE, claim, result_type=bool))
        except WorkflowUpdateFailedError:  # an owner without the update: it decides as before
            return True
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:  # finished, terminated
                return False
            if err.status in PERMANENT:
                return True
            raise
