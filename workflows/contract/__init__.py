"""The contract between the gateway and the workers: the only module both import.

Everything both sides must agree on lives in this package and only here: the
task queue, workflow ids, update/signal/query/activity names, search attributes,
error codes, who may act on a thread, and the pydantic payloads that cross the
Temporal boundary. By role:

- `names`: task queue, workflow/update/signal/query/activity names, ids, search attributes;
  `WireDict` and `wire`, an AG-UI model as its wire dict
- `errors`: error codes and the refusal a run gets
- `access`: who may see or act on a thread, and who may answer an interrupt
- `runs`: the `run` update, the `run_events` query, the thread's start input
- `view`: the `thread` query's answer
- `resume`: the rules a resume's entries are decided by, in the thread and from the archive
- `replay`: a repeated resume answered from the archive, once its interrupts left the thread
- `producers`: offers, withdrawals, posts and settlements between threads and owners
- `tools`: what a tool-call interrupt carries for the gateway's TanStack binding
- `transcript`: the thread's message window, the archive beyond it, their budgets

AG-UI objects (messages, interrupts, events) travel as their camelCase wire
dicts: the workflow builds them with `ag_ui.core` models and stores what the
client will read, so the gateway never re-shapes them.
"""

from ag_ui_temporal.workflows.contract.access import (
    GROUP_PREFIX,
    INBOX_AGENT,
    INBOX_PREFIX,
    OTHER_OWNER,
    THREAD_MEMO_KEY,
    ThreadMemo,
    admits,
    effective_owner,
    may_act,
    may_answer,
    natural_agent,
    natural_owner,
    read_thread_memo,
    thread_memo,
)
from ag_ui_temporal.workflows.contract.errors import ErrorCode, InterruptError, RunRejection
from ag_ui_temporal.workflows.contract.names import (
    APPROVALS_PARTICIPANTS,
    APPROVALS_PENDING,
    ASK_OWNER_ACTIVITY,
    CLAIM_UPDATE,
    CONFIRM_SETTLED_ACTIVITY,
    INTERRUPT_SETTLED_SIGNAL,
    OFFER_INTERRUPT_SIGNAL,
    POST_MESSAGE_SIGNAL,
    RUN_EVENTS_QUERY,
    RUN_IDS,
    RUN_UPDATE,
    SEARCH_ATTRIBUTES,
    SETTLEMENT_QUERY,
    SIGNAL_THREAD_ACTIVITY,
    STREAM_PUBLISH_SIGNAL,
    TASK_QUEUE,
    THREAD_QUERY,
    THREAD_WORKFLOW,
    WITHDRAW_INTERRUPT_SIGNAL,
    WireDict,
    run_update_id,
    thread_workflow_id,
    wire,
)
from ag_ui_temporal.workflows.contract.producers import (
    REFUSED_KEPT,
    REFUSED_METADATA_KEY,
    InterruptClaim,
    InterruptSettled,
    OfferInterrupt,
    OfferRefusal,
    PostMessage,
    SettledStatus,
    SettlementQuery,
    ThreadSignal,
    WithdrawInterrupt,
    offer_refusal,
)
from ag_ui_temporal.workflows.contract.runs import (
    MAX_INTERRUPTS_PER_RUN,
    MAX_PENDING_INTERRUPTS,
    MAX_TOOL_CALLS_PER_RESPONSE,
    RESERVED_METADATA_KEY,
    TOOL_MAX_ATTEMPTS,
    AgentConfig,
    ResumeItem,
    RunEventsPage,
    RunEventsQuery,
    RunRequest,
    RunResult,
    ThreadInput,
    ThreadSettings,
    reserved_metadata_keys,
    thread_input,
)
from ag_ui_temporal.workflows.contract.tools import TOOL_CALL_METADATA_KEY, approval_response_schema
from ag_ui_temporal.workflows.contract.transcript import (
    ARCHIVE_EVENTS_ACTIVITY,
    ARCHIVE_MESSAGES_ACTIVITY,
    MAX_MESSAGE_BYTES,
    MAX_RUN_MESSAGES_BYTES,
    MAX_WINDOW_BYTES,
    SNAPSHOT_KEY,
    THREAD_WINDOW_BYTES,
    ArchiveEvents,
    ArchiveMessages,
    is_snapshot_marker,
    is_unfilled_marker,
    json_size,
)
from ag_ui_temporal.workflows.contract.view import (
    PENDING_STATUSES,
    InterruptStatus,
    InterruptView,
    RunView,
    ThreadView,
)

# The approval chains' names and models: `workflows.contract.chains`.

__all__ = [
    "APPROVALS_PARTICIPANTS",
    "APPROVALS_PENDING",
    "ARCHIVE_EVENTS_ACTIVITY",
    "ARCHIVE_MESSAGES_ACTIVITY",
    "ASK_OWNER_ACTIVITY",
    "CLAIM_UPDATE",
    "CONFIRM_SETTLED_ACTIVITY",
    "GROUP_PREFIX",
    "INBOX_AGENT",
    "INBOX_PREFIX",
    "INTERRUPT_SETTLED_SIGNAL",
    "MAX_INTERRUPTS_PER_RUN",
    "MAX_MESSAGE_BYTES",
    "MAX_PENDING_INTERRUPTS",
    "MAX_RUN_MESSAGES_BYTES",
    "MAX_TOOL_CALLS_PER_RESPONSE",
    "MAX_WINDOW_BYTES",
    "OFFER_INTERRUPT_SIGNAL",
    "OTHER_OWNER",
    "PENDING_STATUSES",
    "POST_MESSAGE_SIGNAL",
    "REFUSED_KEPT",
    "REFUSED_METADATA_KEY",
    "RESERVED_METADATA_KEY",
    "RUN_EVENTS_QUERY",
    "RUN_IDS",
    "RUN_UPDATE",
    "SEARCH_ATTRIBUTES",
    "SETTLEMENT_QUERY",
    "SIGNAL_THREAD_ACTIVITY",
    "SNAPSHOT_KEY",
    "STREAM_PUBLISH_SIGNAL",
    "TASK_QUEUE",
    "THREAD_MEMO_KEY",
    "THREAD_QUERY",
    "THREAD_WINDOW_BYTES",
    "THREAD_WORKFLOW",
    "TOOL_CALL_METADATA_KEY",
    "TOOL_MAX_ATTEMPTS",
    "WITHDRAW_INTERRUPT_SIGNAL",
    "AgentConfig",
    "ArchiveEvents",
    "ArchiveMessages",
    "ErrorCode",
    "InterruptClaim",
    "InterruptError",
    "InterruptSettled",
    "InterruptStatus",
    "InterruptView",
    "OfferInterrupt",
    "OfferRefusal",
    "PostMessage",
    "ResumeItem",
    "RunEventsPage",
    "RunEventsQuery",
    "RunRejection",
    "RunRequest",
    "RunResult",
    "RunView",
    "SettledStatus",
    "SettlementQuery",
    "ThreadInput",
    "ThreadMemo",
    "ThreadSettings",
    "ThreadSignal",
    "ThreadView",
    "WireDict",
    "WithdrawInterrupt",
    "admits",
    "approval_response_schema",
    "effective_owner",
    "is_snapshot_marker",
    "is_unfilled_marker",
    "json_size",
    "may_act",
    "may_answer",
    "natural_agent",
    "natural_owner",
    "offer_refusal",
    "read_thread_memo",
    "reserved_metadata_keys",
    "run_update_id",
    "thread_input",
    "thread_memo",
    "thread_workflow_id",
    "wire",
]
