"""The contract between the gateway and the workers.

Everything both sides must agree on lives here and only here: the task queue,
workflow ids, update/query names, error codes and the pydantic payloads that
cross the Temporal boundary. Every entry point takes one input model so fields
can be added later without breaking workflows that are parked for days.

AG-UI objects (messages, interrupts, events) travel as their camelCase wire
dicts: the workflow builds them with `ag_ui.core` models and stores what the
client will read, so the gateway never re-shapes them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field
from temporalio.common import SearchAttributeKey

TASK_QUEUE = "ag-ui-temporal"
THREAD_WORKFLOW = "ThreadWorkflow"
RUN_UPDATE = "run"
"""Update: start a run (new input or resume) and return its events when it ends."""
RUN_EVENTS_QUERY = "run_events"
"""Query: one run's events after an offset (progressive streaming, re-attach, join)."""
THREAD_QUERY = "thread"
"""Query: the thread's transcript, open interrupts and runs (hydration, tests)."""

OFFER_INTERRUPT_SIGNAL = "offer_interrupt"
"""Signal (thread): an external owner workflow offers an interrupt (`OfferInterrupt`)."""
WITHDRAW_INTERRUPT_SIGNAL = "withdraw_interrupt"
"""Signal (thread): the owner takes its interrupt back (`WithdrawInterrupt`)."""
POST_MESSAGE_SIGNAL = "post_message"
"""Signal (thread): a producer posts a message for the client's next run (`PostMessage`)."""
INTERRUPT_SETTLED_SIGNAL = "agui_interrupt_settled"
"""Signal (owner workflow): the thread settled the owner's interrupt (`InterruptSettled`)."""
SIGNAL_THREAD_ACTIVITY = "agui_signal_thread"
"""Activity (thread task queue): signal-with-start a thread for a producer (`ThreadSignal`)."""
SETTLEMENT_QUERY = "interrupt_settlement"
"""Query (thread): how the thread recorded one interrupt's settlement (`SettlementQuery`)."""
CLAIM_UPDATE = "agui_interrupt_claim"
"""Update (owner workflow): before the thread accepts an answer to an owner's interrupt, may it?
(`InterruptClaim` -> bool; False: the owner closed it, the answer gets `INTERRUPT_WITHDRAWN`)."""
ASK_OWNER_ACTIVITY = "agui_ask_owner"
"""Activity (thread task queue): the thread sends `CLAIM_UPDATE` to an owner (`InterruptClaim`)."""
CONFIRM_SETTLED_ACTIVITY = "agui_confirm_settled"
"""Activity (thread task queue): an owner checks a settlement it heard against the thread's
own record (`SettlementQuery` -> `InterruptSettled | None`): forged signals do not count."""

RUN_IDS = SearchAttributeKey.for_keyword_list("AguiRunIds")
"""The thread's recent run ids, so a join that names only a run finds its thread."""
APPROVALS_PENDING = SearchAttributeKey.for_keyword_list("AguiApprovalPending")
"""Approval chains: the principals whose decision the chain is waiting for now."""
APPROVALS_PARTICIPANTS = SearchAttributeKey.for_keyword_list("AguiApprovalParticipants")
"""Approval chains: every principal a step was ever assigned to (the `done` inbox)."""
SEARCH_ATTRIBUTES = (RUN_IDS, APPROVALS_PENDING, APPROVALS_PARTICIPANTS)
"""Every search attribute the app upserts (the server must have them registered)."""

WireDict = dict[str, Any]

AGENTS: dict[str, str] = {
    "assistant": "Deterministic demo assistant: emails with approval, the quarterly report form.",
    "inbox": "Delivers what other workflows offered or posted to the thread (no model, no tools).",
}
"""Agent names served at `POST /agents/{agent}`, with a one-line description."""


def thread_workflow_id(thread_id: str) -> str:
    """The one workflow that owns an AG-UI thread."""
    return f"agui-thread:{thread_id}"


def run_update_id(run_id: str) -> str:
    """Update id for a run: a re-sent POST of the same run is deduplicated by Temporal."""
    return f"run:{run_id}"


GROUP_PREFIX = "group:"
"""An `allowed_resolvers` (or thread owner) entry `group:G` admits every member of group G."""
INBOX_PREFIX = "inbox:"


def natural_owner(thread_id: str) -> str | None:
    """`inbox:P` belongs to P whoever starts it (no one can squat another's inbox)."""
    return thread_id.removeprefix(INBOX_PREFIX) if thread_id.startswith(INBOX_PREFIX) else None


def admits(entries: list[str], principal: str | None, groups: list[str] | tuple[str, ...]) -> bool:
    """Whether `principal` (member of `groups`) is named by `entries`: by name, or by a
    `group:G` entry. A principal literally named `group:G` matches no group entry."""
    if principal is None:
        return False
    for entry in entries:
        if entry.startswith(GROUP_PREFIX):
            if entry.removeprefix(GROUP_PREFIX) in groups:
                return True
        elif entry == principal:
            return True
    return False


class ErrorCode(StrEnum):
    """Stable `RUN_ERROR.code` values. Raised as `ApplicationError.type` by the workflow."""

    RESUME_REQUIRED = "RESUME_REQUIRED"
    UNKNOWN_INTERRUPT_ID = "UNKNOWN_INTERRUPT_ID"
    PARTIAL_RESUME = "PARTIAL_RESUME"
    INVALID_PAYLOAD = "INVALID_PAYLOAD"
    INTERRUPT_EXPIRED = "INTERRUPT_EXPIRED"
    INTERRUPT_ALREADY_RESOLVED = "INTERRUPT_ALREADY_RESOLVED"
    INVALID_RESUME = "INVALID_RESUME"
    AGENT_MISMATCH = "AGENT_MISMATCH"
    INTERRUPT_WITHDRAWN = "INTERRUPT_WITHDRAWN"
    FORBIDDEN = "FORBIDDEN"
    RUN_FAILED = "RUN_FAILED"
    UNAVAILABLE = "UNAVAILABLE"
    LIMIT_EXCEEDED = "LIMIT_EXCEEDED"
    """The agent asked for more interrupts in one run than `max_interrupts_per_run`."""


MAX_INTERRUPTS_PER_RUN = 50
"""Default cap on the interrupts one run's `RUN_FINISHED` delivers (offered ones beyond
it wait for the next run); the gateway's `max_resume_entries` is never below it."""
MAX_PENDING_INTERRUPTS = 1_000
"""Default cap on open + offered interrupts in one thread; producers' offers beyond it
are refused: the owner hears `cancelled`, metadata `{"ag-ui": {"refused": "LIMIT_EXCEEDED"}}`."""

RESERVED_METADATA_KEY = "ag-ui"
"""AG-UI's reserved metadata namespace: the key itself and every `ag-ui:*` key. Clients
may not send them in resume metadata; only the server writes them."""


def reserved_metadata_keys(metadata: dict[str, Any] | None) -> list[str]:
    """The keys of `metadata` in the reserved `ag-ui` namespace (clients may not send them)."""
    return [
        key
        for key in metadata or {}
        if key == RESERVED_METADATA_KEY or key.startswith(f"{RESERVED_METADATA_KEY}:")
    ]


class InterruptError(BaseModel):
    """One item- or batch-level problem, shaped for TanStack's `interruptErrors`."""

    scope: Literal["item", "batch"]
    code: ErrorCode
    message: str
    interrupt_id: str | None = None
    """Set for item errors."""
    interrupt_ids: list[str] | None = None
    """Set for batch errors: the interrupts the problem concerns."""


class RunRejection(BaseModel):
    """Why a run was refused; the details of the `ApplicationError` the workflow raises."""

    code: ErrorCode
    message: str
    interrupt_errors: list[InterruptError] = Field(default_factory=list)
    interrupted_run_id: str | None = None
    """The run whose interrupts the errors concern (TanStack binds items to it)."""


class ResumeItem(BaseModel):
    """An AG-UI `ResumeEntry`, as the workflow receives it."""

    interrupt_id: str
    status: Literal["resolved", "cancelled"]
    payload: Any = None
    has_payload: bool = False
    """Whether the client sent a `payload` key at all (an explicit null is still a payload)."""
    metadata: dict[str, Any] | None = None


class AgentConfig(BaseModel):
    """Per-thread agent settings, fixed when the thread starts."""

    input_expires_in_seconds: float = 2 * 24 * 3600
    """How long an `input_required` form stays answerable."""
    max_interrupts_per_run: int = MAX_INTERRUPTS_PER_RUN
    """Interrupts one run delivers at most; an agent asking more ends the run with
    `LIMIT_EXCEEDED`."""
    max_pending_interrupts: int = MAX_PENDING_INTERRUPTS
    """Open + offered interrupts the thread holds at most; offers beyond it are refused."""


class RunRequest(BaseModel):
    """Input of the `run` update: one `RunAgentInput` POST."""

    thread_id: str
    run_id: str
    agent: str
    parent_run_id: str | None = None
    messages: list[WireDict] = Field(default_factory=list)
    state: Any = None
    resume: list[ResumeItem] = Field(default_factory=list)
    principal: str | None = None
    """Who sent the run (the gateway's auth layer); checked against `allowed_resolvers`."""
    groups: list[str] = Field(default_factory=list)
    """The principal's groups (`group:G` entries of `allowed_resolvers` and owners)."""


class RunResult(BaseModel):
    """Result of the `run` update: the run's events in order, as wire dicts."""

    events: list[WireDict]
    first_offset: int
    """Offset of the first event in the thread's event log (SSE ids)."""
    owner: str | None = None
    """The thread's owner: the gateway shows the run to it only (Temporal answers a re-sent
    run id from the stored result, without asking the validator)."""


class ThreadInput(BaseModel):
    """Start (and continue-as-new) input of the thread workflow."""

    thread_id: str
    agent: str
    config: AgentConfig = Field(default_factory=AgentConfig)
    index_runs: bool = True
    """Upsert `AguiRunIds` (the server must have it registered; the time-skipping one cannot)."""
    history_limit: int = 8_000
    """Continue-as-new once the history is this long (well below the server's 51,200)."""
    carried: ThreadState | None = None
    """State carried over by continue-as-new."""
    owner: str | None = None
    """The principal the thread belongs to if this input starts it (None: unowned)."""


class InterruptStatus(StrEnum):
    OFFERED = "offered"
    """Offered by an external owner; delivered (and opened) by the thread's next run."""
    OPEN = "open"
    RESOLVED = "resolved"
    CANCELLED = "cancelled"
    EXPIRED = "expired"
    WITHDRAWN = "withdrawn"
    """Taken back by its owner: no longer answerable, no longer awaited."""


class InterruptRecord(BaseModel):
    """An interrupt as the thread keeps it."""

    interrupt: WireDict
    """The AG-UI `Interrupt` wire dict, binding included, exactly as clients saw it."""
    run_id: str
    """The run that delivered it (TanStack's `interruptedRunId`); "" while only offered."""
    status: InterruptStatus = InterruptStatus.OPEN
    expires_at: str | None = None
    data: WireDict = Field(default_factory=dict)
    """What the agent needs to continue once the interrupt settles (e.g. the tool call)."""
    resolution: ResumeItem | None = None
    resolved_by_run: str | None = None
    """The run that applied the resolution (replays of it yield that run's outcome)."""
    owner: str | None = None
    """Workflow id of the external owner the resolution is routed to (None: the agent's)."""
    allowed_resolvers: list[str] | None = None
    """Principals (or `group:G`) allowed to answer (None: anyone); others get `FORBIDDEN`."""
    resolved_by: str | None = None
    """The principal whose run applied the resolution (when the gateway knew it)."""

    @property
    def id(self) -> str:
        return str(self.interrupt["id"])

    @property
    def awaiting_answer(self) -> bool:
        """Open, or expired but not yet acknowledged by a cancel: a resume must cover it."""
        return (
            self.status in (InterruptStatus.OPEN, InterruptStatus.EXPIRED)
            and self.resolution is None
            and self.run_id != ""  # offered and expired before any run delivered it
        )


class RunRecord(BaseModel):
    """A run of the thread, kept so re-sent and replayed runs get the same answer."""

    run_id: str
    parent_run_id: str | None = None
    first_offset: int
    last_offset: int = -1
    finished: bool = False


class ThreadState(BaseModel):
    """Everything the thread owns: the continue-as-new state and (without events) the
    `thread` query's answer."""

    thread_id: str
    agent: str
    messages: list[WireDict] = Field(default_factory=list)
    state: Any = Field(default_factory=dict)
    interrupts: list[InterruptRecord] = Field(default_factory=list)
    runs: list[RunRecord] = Field(default_factory=list)
    events: list[WireDict] = Field(default_factory=list)
    """The event log's retained tail."""
    events_start: int = 0
    """Offset of `events[0]`; offsets never repeat, also across continue-as-new."""
    undelivered_posts: list[str] = Field(default_factory=list)
    """Ids of posted messages (already in `messages`) the next run streams as text events."""
    owner: str | None = None
    """The principal that created the thread (None: unowned, e.g. threads older than auth);
    only it (or, for `group:G`, G's members) may run, hydrate or join the thread."""
    refused: dict[str, str] = Field(default_factory=dict)
    """Offers refused because the thread was full, interrupt id -> owner workflow id (the
    latest `REFUSED_KEPT`): their owners confirm the `cancelled` they heard against it."""

    @property
    def effective_owner(self) -> str | None:
        return self.owner or natural_owner(self.thread_id)


class RunEventsQuery(BaseModel):
    """Input of the `run_events` query."""

    run_id: str
    after: int = -1
    """Return the run's events whose offset is greater than this."""


class RunEventsPage(BaseModel):
    found: bool
    """False when the thread has no such run (or no longer keeps its events)."""
    events: list[WireDict] = Field(default_factory=list)
    first_offset: int = 0
    """Offset of `events[0]`."""
    finished: bool = False
    """The run's terminal event is in this page or an earlier one."""
    owner: str | None = None
    """The thread's (effective) owner: the gateway answers 404 to anyone else."""
    agent: str | None = None
    """The thread's agent: a join on another agent's URL is answered 404, as for hydrate."""


class OfferInterrupt(BaseModel):
    """Input of the `offer_interrupt` signal."""

    owner_workflow_id: str
    interrupt: WireDict
    """AG-UI `Interrupt` wire dict: id, reason, message, responseSchema?, expiresAt?, metadata?"""
    allowed_resolvers: list[str] | None = None


class WithdrawInterrupt(BaseModel):
    """Input of the `withdraw_interrupt` signal (only the interrupt's owner may withdraw)."""

    owner_workflow_id: str
    interrupt_id: str
    reason: str | None = None


class PostMessage(BaseModel):
    """Input of the `post_message` signal: one assistant text message."""

    message_id: str
    """Also the idempotency key: a message id the thread has is ignored."""
    text: str


class InterruptSettled(BaseModel):
    """Input of the owner-side `agui_interrupt_settled` signal."""

    interrupt_id: str
    thread_id: str
    status: Literal["resolved", "cancelled", "expired"]
    payload: Any = None
    metadata: dict[str, Any] | None = None
    run_id: str | None = None
    """The run that carried the answer (None for an expiry)."""
    principal: str | None = None
    """Who answered (the run's principal), when known."""


class SettlementQuery(BaseModel):
    """Input of the `interrupt_settlement` query and the `agui_confirm_settled` activity."""

    interrupt_id: str
    owner_workflow_id: str
    """Who asks: the thread answers only about interrupts this workflow owns."""
    thread_id: str = ""
    """The thread the owner offered the interrupt to (the activity's input only)."""


class InterruptClaim(BaseModel):
    """Input of the `agui_interrupt_claim` update and the `agui_ask_owner` activity."""

    interrupt_id: str
    owner_workflow_id: str
    principal: str | None = None


REFUSED_KEPT = 200
"""Refused offers a thread remembers (their owners confirm the refusal within seconds)."""


class ThreadSignal(BaseModel):
    """Input of the `agui_signal_thread` activity: signal (starting if needed) a thread."""

    thread_id: str
    agent: str = "inbox"
    """The agent of the thread if this signal starts it."""
    signal: str
    arg: WireDict
    start: bool = True
    """Signal-with-start; False: signal only, and a missing thread is not an error."""
    thread_owner: str | None = None
    """The principal the thread belongs to if this signal starts it (`inbox:P`: always P)."""


ThreadInput.model_rebuild()
