"""One decision on one interrupt, outside the chat: what a decision link and
`POST /interrupts/{id}` both do.

A decision is a run of the interrupt's thread through the same `run` update an AG-UI resume
is (`gateway/runs.py`), with one resume entry, `partial` (the inbox takes answers one by
one) and `via` (how it came, for the audit trail), as the deciding principal: every rule the
thread applies holds — owner, allowed resolvers, expiry, withdrawal, the payload's schema,
and for a chain's seat the chain's own rules. Nothing is decided here that the thread does
not decide.

The run id is derived from the decision (principal, thread, interrupt, status and canonical
payload), so a decision sent again is the same update: Temporal (or the thread's log) answers
it with the first one's result, and a repeat after the thread let the run go is answered by
the thread's replay rule or the store's archive (`streaming.replays`) — `replayed` says so.
Nobody else can send a run under that id (`decision_ids`), and whatever run answers under
it, a decision is reported taken only when the thread holds the interrupt settled with it
(`_landed`): otherwise it is refused, and nothing was applied.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from sqlalchemy.exc import SQLAlchemyError
from temporalio.client import (
    Client,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.service import RPCError, RPCStatusCode

from ag_ui_temporal.gateway.access import Access, is_admin
from ag_ui_temporal.gateway.auth import Principal
from ag_ui_temporal.gateway.decision_ids import RunIdKey, decision_run_id
from ag_ui_temporal.gateway.input_limits import id_problem
from ag_ui_temporal.gateway.runs import CONTRACT_CODES, contract_rejection, foreign
from ag_ui_temporal.gateway.streaming import archived_replay, thread_handle
from ag_ui_temporal.observability.logs import bind as bind_log_context
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.store import Transcript
from ag_ui_temporal.workflows.contract import (
    DECISION_RUN_PREFIX,
    RUN_UPDATE,
    THREAD_QUERY,
    ErrorCode,
    InterruptStatus,
    InterruptView,
    ResumeItem,
    RunRejection,
    RunRequest,
    RunResult,
    ThreadView,
    may_answer,
    run_digest,
    run_update_id,
)
from ag_ui_temporal.workflows.contract.resume import answer_digest
from ag_ui_temporal.workflows.contract.runs import DecisionVia

log = logging.getLogger(__name__)

HTTP_STATUS: Final[dict[str, int]] = {
    ErrorCode.UNKNOWN_INTERRUPT_ID: 404,
    ErrorCode.FORBIDDEN: 403,
    ErrorCode.INTERRUPT_EXPIRED: 409,
    ErrorCode.INTERRUPT_WITHDRAWN: 409,
    ErrorCode.INTERRUPT_ALREADY_RESOLVED: 409,
    ErrorCode.PARTIAL_RESUME: 409,
    ErrorCode.RESUME_REQUIRED: 409,
    ErrorCode.AGENT_MISMATCH: 409,
    ErrorCode.RUN_FAILED: 409,
    ErrorCode.RUN_ID_TAKEN: 409,
    ErrorCode.INVALID_PAYLOAD: 422,
    ErrorCode.INVALID_RESUME: 422,
    ErrorCode.LIMIT_EXCEEDED: 422,
    ErrorCode.UNAVAILABLE: 503,
}
"""A refusal's HTTP status, by its code: the interrupt is unknown (or the thread is not the
caller's to see: the same answer, so existence does not leak) 404; the caller may not answer
it 403; it no longer takes this answer (or the thread wants more) 409; the answer itself is
wrong 422; Temporal did not answer 503 (the same decision may be sent again)."""

NO_SUCH_INTERRUPT: Final = "no such interrupt"
TEMPORAL_SILENT: Final = "Temporal did not answer; send the same decision again"
STORE_SILENT: Final = "the store did not answer; send the same decision again"
NOT_LANDED: Final = (
    "another run of the thread was sent under this decision's run id and did not answer the "
    "interrupt: nothing was applied; answer it in the chat"
)


class DecisionRefused(Exception):
    """The decision was not taken; nothing changed (`code`: an `ErrorCode`)."""

    def __init__(self, code: str, message: str, http_status: int) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.http_status = http_status

    @classmethod
    def of(cls, code: ErrorCode, message: str) -> DecisionRefused:
        return cls(code.value, message, HTTP_STATUS.get(code, 409))


def _unknown() -> DecisionRefused:
    return DecisionRefused.of(ErrorCode.UNKNOWN_INTERRUPT_ID, NO_SUCH_INTERRUPT)


def _unavailable(message: str = TEMPORAL_SILENT) -> DecisionRefused:
    return DecisionRefused.of(ErrorCode.UNAVAILABLE, message)


@dataclass(frozen=True)
class Decided:
    """A decision the thread took (or had taken already: `replayed`)."""

    interrupt_id: str
    thread_id: str
    status: str
    run_id: str
    """The run that carried it (a repeat: the run id this decision always gets)."""
    replayed: bool
    """The same decision had been applied before: this one changed nothing."""

    def public(self) -> dict[str, Any]:
        """As `POST /interrupts/{id}` answers."""
        return {
            "interruptId": self.interrupt_id,
            "threadId": self.thread_id,
            "status": self.status,
            "runId": self.run_id,
            "replayed": self.replayed,
        }


@dataclass(frozen=True)
class SeenThread:
    """A thread the principal may see, as it was just before the decision."""

    handle: WorkflowHandle[Any, Any]
    view: ThreadView
    access: Access
    """The request's one access decision (the decision's outcome is judged by it too)."""

    def interrupt(self, interrupt_id: str) -> InterruptView | None:
        return next((r for r in self.view.interrupts if r.id == interrupt_id), None)


async def seen_thread(
    client: Client, settings: Settings, principal: Principal, thread_id: str
) -> SeenThread:
    """Thread `thread_id` as `principal` may see it, or `UNKNOWN_INTERRUPT_ID` (a thread that
    is not theirs is answered as one that does not exist, at the cost `access` gives)."""
    if id_problem(thread_id, settings) is not None:
        raise _unknown()  # no thread has such an id
    handle = thread_handle(client, thread_id)
    access = Access(principal, is_admin(principal, settings))
    try:
        view = await access.view(handle, thread_id)
    except (RPCError, WorkflowQueryFailedError):
        raise _unavailable() from None
    if view is None:  # not theirs, or none: the same answer
        raise _unknown()
    return SeenThread(handle, view, access)


async def decide(
    client: Client,
    settings: Settings,
    principal: Principal,
    thread_id: str,
    interrupt_id: str,
    status: str,
    payload: Any,
    has_payload: bool,
    metadata: dict[str, Any] | None,
    via: DecisionVia,
    *,
    run_ids: RunIdKey,
    transcript: Transcript | None = None,
    thread: SeenThread | None = None,
) -> Decided:
    """Send `principal`'s answer to one interrupt of `thread_id`; `DecisionRefused` with the
    thread's own code when it is not taken (nothing was applied). `run_ids`: the key of the
    run id; `thread`: the thread as the caller just read it (else it is read here);
    `transcript`: the archive, for a repeat of a decision the thread let go."""
    thread = thread or await seen_thread(client, settings, principal, thread_id)
    try:
        key = await run_ids.get()
    except (SQLAlchemyError, OSError) as err:
        log.warning("decision: the store did not give the run id key: %r", err)
        raise _unavailable(STORE_SILENT) from None
    run_id = decision_run_id(key, principal.name, thread_id, interrupt_id, status, payload)
    bind_log_context(
        thread_id=thread_id, run_id=run_id, interrupt_ids=[interrupt_id], principal=principal.name
    )
    before = thread.interrupt(interrupt_id)
    entry = ResumeItem(
        interrupt_id=interrupt_id,
        status="cancelled" if status == "cancelled" else "resolved",
        payload=payload,
        has_payload=has_payload,
        metadata=metadata,
    )
    request = RunRequest(
        principal=principal.name,
        groups=list(principal.groups),
        admin=thread.access.admin,
        fill_snapshots=False,  # nobody reads this run's snapshot
        thread_id=thread_id,
        run_id=run_id,
        agent=thread.view.agent,
        parent_run_id=(before.run_id or None) if before is not None else None,
        resume=[entry],
        partial=True,
        via=via,
    )
    outcome = await _run(thread.handle, request)
    if (
        _unknown_to_thread(outcome)
        and before is not None
        and before.status == InterruptStatus.OFFERED
    ):
        await _deliver(thread.handle, request)  # an offer waiting behind another: open it
        outcome = await _run(thread.handle, request)
    if isinstance(outcome, RunRejection):
        if foreign(outcome):
            raise _unknown()
        answer = await archived_replay(transcript, thread.handle, request, outcome, -1)
        if isinstance(answer, RunRejection):
            raise DecisionRefused.of(answer.code, answer.message)
        return _decided(request, replayed=True)
    if not thread.access.sees(outcome.owner):
        raise _unknown()  # a run id answered from Temporal's store: only to its owner
    landed = await _landed(thread, request, outcome)
    if landed is None:  # whatever the run did, this answer is not the thread's
        raise DecisionRefused.of(*(_run_error(outcome) or (ErrorCode.RUN_ID_TAKEN, NOT_LANDED)))
    settled_before = before is not None and before.resolution is not None
    return _decided(request, replayed=landed is Landed.EARLIER or settled_before)


def _decided(request: RunRequest, *, replayed: bool) -> Decided:
    [entry] = request.resume
    return Decided(entry.interrupt_id, request.thread_id, entry.status, request.run_id, replayed)


async def _run(handle: WorkflowHandle[Any, Any], request: RunRequest) -> RunResult | RunRejection:
    """The `run` update, to its end: its result, or the contract rule that refused it."""
    try:
        update_id = run_update_id(request.run_id, run_digest(request))
        result: RunResult = await handle.execute_update(
            RUN_UPDATE, request, id=update_id, result_type=RunResult
        )
    except WorkflowUpdateFailedError as err:
        if (rejection := contract_rejection(err)) is not None:
            return rejection
        log.warning("decision %s: the update failed: %r", request.run_id, err.cause)
        raise _unavailable() from None
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            raise _unknown() from None  # the thread is gone
        log.warning("decision %s: Temporal did not answer: %s", request.run_id, err)
        raise _unavailable() from None
    except WorkflowUpdateRPCTimeoutOrCancelledError:
        raise _unavailable() from None
    return result


def _unknown_to_thread(outcome: RunResult | RunRejection) -> bool:
    return isinstance(outcome, RunRejection) and outcome.code == ErrorCode.UNKNOWN_INTERRUPT_ID


async def _deliver(handle: WorkflowHandle[Any, Any], decision: RunRequest) -> None:
    """A run that brings nothing: the thread delivers its offered interrupts with it (as a
    client's empty run does). Its own refusal or end does not matter: the decision's retry
    tells."""
    request = decision.model_copy(
        update={
            "run_id": f"{DECISION_RUN_PREFIX}delivery-{uuid.uuid4().hex[:16]}",
            "parent_run_id": None,
            "resume": [],
            "partial": False,
        }
    )
    await _run(handle, request)


def _run_error(result: RunResult) -> tuple[ErrorCode, str] | None:
    """The run's `RUN_ERROR`, if it ended with one (the thread took the run, then refused
    the answer, e.g. its owner no longer takes it)."""
    last = result.events[-1] if result.events else {}
    if last.get("type") != "RUN_ERROR":
        return None
    code = last.get("code")
    known = code if isinstance(code, str) and code in CONTRACT_CODES else ErrorCode.RUN_FAILED
    return ErrorCode(known), str(last.get("message") or "the run failed")


class Landed(Enum):
    """How the thread holds a decision its run id was answered for."""

    BY_THE_RUN = "by the run"
    """The decision's run settled the interrupt (also when the agent failed after that)."""
    EARLIER = "earlier"
    """Another run had settled it with the same answer: the thread's replay rule took the
    decision as a repeat (`replayed`)."""


async def _landed(thread: SeenThread, request: RunRequest, result: RunResult) -> Landed | None:
    """Whether the interrupt is settled with this decision (None: it is not). The run's own
    result says it for a run it settled; else (a repeat, a worker from before `settled`, or
    another run under this id) the thread's view decides, by the replay rule's terms."""
    [entry] = request.resume
    if entry.interrupt_id in (result.settled or []):
        return Landed.BY_THE_RUN
    try:
        view: ThreadView = await thread.handle.query(THREAD_QUERY, result_type=ThreadView)
    except (RPCError, WorkflowQueryFailedError):
        raise _unavailable() from None
    record = next((r for r in view.interrupts if r.id == entry.interrupt_id), None)
    if record is None or record.resolution is None:
        return None
    if record.resolved_by_run == request.run_id:
        return Landed.BY_THE_RUN
    applied = answer_digest(record.resolution.status, record.resolution.payload)
    if applied == answer_digest(entry.status, entry.payload) and may_answer(
        record.allowed_resolvers, request.principal, request.groups
    ):
        return Landed.EARLIER
    return None
