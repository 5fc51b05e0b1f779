"""A run's wire models: the `run` update, the `run_events` query, the thread's start input.

Every entry point takes one input model so fields can be added later without
breaking workflows that are parked for days.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import timedelta
from enum import StrEnum
from typing import Any, Final, Literal, Protocol

from pydantic import BaseModel, Field

from ag_ui_temporal.workflows.contract.access import natural_agent, natural_owner
from ag_ui_temporal.workflows.contract.names import WireDict

MAX_INTERRUPTS_PER_RUN = 50
"""Default cap on the interrupts one run's `RUN_FINISHED` delivers (offered ones beyond
it wait for the next run); the gateway's `max_resume_entries` is never below it."""
MAX_TOOL_CALLS_PER_RESPONSE = 1_000
"""Tool calls a model activity returns at most (the call past it fails the request): a bound
on its result and its stream whatever `max_interrupts_per_run` is, which cannot exceed it."""
MAX_PENDING_INTERRUPTS = 1_000
"""Default cap on open + offered interrupts in one thread; producers' offers beyond it
are refused: the owner hears `cancelled`, `offer_refusal` code `LIMIT_EXCEEDED`."""
TOOL_MAX_ATTEMPTS = 5
"""Default attempts of a tool's activity; after the last, the tool failed for good and the
agent gets the failure as the tool's result."""
TOOL_TIMEOUT: Final = timedelta(seconds=30)
"""Each attempt of a tool's activity (its `start_to_close_timeout`), whoever starts it: a
tool the thread runs in workflow code (`demo.assistant.tool_activity`, `Turn.execute`) and
a pydantic-ai tool activity (`agents.thread.thread_capabilities`). Not above the worker's
`WORKER_GRACEFUL_SHUTDOWN_TIMEOUT` (30 s), so a drained worker lets an attempt end rather
than cancel it; an attempt a killed worker left is retried this long after it started."""

RESERVED_METADATA_KEY = "ag-ui"
"""AG-UI's reserved metadata namespace: the key itself and every `ag-ui:*` key, the protocol's.
Clients may not send them in resume metadata; the server's own keys are `ag-ui-temporal:*`
(threads before patch `refusal-in-own-namespace` wrote a refused offer's reason here)."""


def reserved_metadata_keys(metadata: dict[str, Any] | None) -> list[str]:
    """The keys of `metadata` in the reserved `ag-ui` namespace (clients may not send them)."""
    return [
        key
        for key in metadata or {}
        if key == RESERVED_METADATA_KEY or key.startswith(f"{RESERVED_METADATA_KEY}:")
    ]


DECISION_RUN_PREFIX = "decision-"
"""The runs the gateway sends: a decision's (`decision-` + a keyed digest of the decision,
`gateway.decision_ids`) and the empty one that opens an offer for it (`decision-delivery-…`)."""
THREAD_RUN_ID = re.compile(r"run-[0-9a-f]{16}")
"""The thread's own runs, which deliver offers (`new_id("run")`, seeded per workflow run)."""


def server_run_id(run_id: str) -> bool:
    """Whether `run_id` is one the server makes. A client's run may not take one: the
    thread (and Temporal, by update id) answers a run id it knows with that run's result, so
    a run sent first under a decision's id would be answered in place of the decision."""
    return run_id.startswith(DECISION_RUN_PREFIX) or THREAD_RUN_ID.fullmatch(run_id) is not None


DecisionVia = Literal["chat", "link", "api", "cli", "standing"]
"""How a person's answer reached the thread: an AG-UI resume in a chat (the web UI's chat,
any AG-UI client), a signed decision link, or the decision API (`POST /interrupts/{id}`, which
the web inbox's task list uses), `cli` when `ag-ui-temporal approvals` says it sent it;
`standing`: the thread answered it from a standing decision the person made earlier
(`contract.standing`)."""


class ResumeItem(BaseModel):
    """An AG-UI `ResumeEntry`, as the workflow receives it."""

    interrupt_id: str
    status: Literal["resolved", "cancelled"]
    payload: Any = None
    has_payload: bool = False
    """Whether the client sent a `payload` key at all (an explicit null is still a payload)."""
    metadata: dict[str, Any] | None = None
    """None: the entry has none. AG-UI's metadata is an object or absent, never null: the
    gateway refuses `"metadata": null` (`422`, `INVALID_RESUME` from the decision API)."""


class AgentConfig(BaseModel):
    """Per-thread agent settings, fixed when the thread starts."""

    input_expires_in_seconds: float = 2 * 24 * 3600
    """How long an `input_required` form stays answerable."""
    max_interrupts_per_run: int = MAX_INTERRUPTS_PER_RUN
    """Interrupts one run delivers at most; an agent asking more ends the run with
    `LIMIT_EXCEEDED`."""
    max_pending_interrupts: int = MAX_PENDING_INTERRUPTS
    """Open + offered interrupts the thread holds at most; offers beyond it are refused."""
    tool_max_attempts: int = Field(TOOL_MAX_ATTEMPTS, ge=1)
    """Attempts of a tool's activity (Temporal's retry policy) before it failed for good."""


class RunRequest(BaseModel):
    """Input of the `run` update: one `RunAgentInput` POST."""

    thread_id: str
    run_id: str
    agent: str
    parent_run_id: str | None = None
    messages: list[WireDict] = Field(default_factory=list)
    state: Any = None
    resume: list[ResumeItem] = Field(default_factory=list)
    tools: list[WireDict] = Field(default_factory=list)
    """The client's own tools (`RunAgentInput.tools`): the agent may call them this run."""
    principal: str | None = None
    """Who sent the run (the gateway's auth layer); checked against `allowed_resolvers`."""
    groups: list[str] = Field(default_factory=list)
    """The principal's groups (`group:G` entries of `allowed_resolvers` and owners)."""
    admin: bool = False
    """The principal is one of the gateway's admins (`THREAD_ADMINS`): it may act on a
    thread that has no owner, which nobody else may."""
    partial: bool = False
    """Set by the gateway's decision paths only (a link, `POST /interrupts/{id}`), never from
    a client's `RunAgentInput`: the resume answers just the interrupts it names, where the
    thread's agent takes answers one by one (the inbox); elsewhere it must cover every open
    interrupt, as any resume does."""
    via: DecisionVia = "chat"
    """How the answers of this run came (set by the gateway): recorded with each settlement,
    so the audit trail says it came by link, API or CLI."""
    fill_snapshots: bool = True
    """False: the result leaves its `MESSAGES_SNAPSHOT` marker unfilled and the gateway fills
    it from the thread query, so the transcript is not written into the thread's history
    with every update's result (gateways before this field get it filled)."""


def answer_digest(status: str, payload: Any) -> str:
    """A resume entry's answer as the rules compare it (status and canonical payload; an
    omitted payload is `null`), hashed: the store keeps no copy of the payload."""
    canonical = json.dumps([status, payload], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


BROUGHT_ROLES = frozenset({"user", "tool"})
"""The messages a run brings (the thread takes new user messages and client tools' results);
the others a client sends are the transcript it holds."""


def run_digest(request: RunRequest) -> str:
    """What a run brings, as one digest: its resume entries' answers (as the rules compare
    them: interrupt id, `answer_digest`; metadata is no answer) and the user and tool messages
    it carries. The same POST sent again (a reconnect, a retry) brings the same; a
    continuation sent under the run id of the run that asked (CopilotKit's `useInterrupt`
    does) brings its answers. The gateway puts it in the run's update id (so Temporal answers
    only the same POST with the run's result) and the thread records it with the run (so the
    thread tells them apart after continue-as-new too). Never change what it covers: runs
    recorded before would take their own re-sends for other bodies."""
    answers = [[e.interrupt_id, answer_digest(e.status, e.payload)] for e in request.resume]
    messages = [m for m in request.messages if m.get("role") in BROUGHT_ROLES]
    return _digest(answers, messages)


def _digest(answers: list[list[str]], messages: list[WireDict]) -> str:
    text = json.dumps([answers, messages], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


BRINGS_NOTHING: Final = _digest([], [])
"""`run_digest` of a run that brings nothing (no answer, no message): sent under a run id the
thread knows, it re-attaches to the newest run sent under it (there is nothing it could
apply), whatever the run brought."""


class RunResult(BaseModel):
    """Result of the `run` update: the run's events in order, as wire dicts."""

    events: list[WireDict]
    first_offset: int
    """Offset of the first event in the thread's event log (SSE ids)."""
    owner: str | None = None
    """The thread's owner: the gateway shows the run to it only (Temporal answers a re-sent
    run id from the stored result, without asking the validator)."""
    settled: list[str] | None = None
    """The interrupts this run settled (answered or cancelled by its resume): how the gateway
    knows a decision landed without asking the thread. None from workers before this field,
    and for a repeat answered with an earlier run's outcome (the thread's view then tells)."""


class ThreadInput(BaseModel):
    """Start (and continue-as-new) input of the thread workflow."""

    thread_id: str
    agent: str
    config: AgentConfig = Field(default_factory=AgentConfig)
    index_runs: bool = True
    """Upsert `AguiRunIds` (the server must have it registered; the time-skipping one cannot)."""
    audit_in_task: bool = True
    """Send the audit records in the task that made the change (`settings.audit_in_task`)."""
    history_limit: int = 8_000
    """Continue-as-new once the history is this long (well below the server's 51,200)."""
    carried: WireDict | None = None
    """The thread's own state, carried over by continue-as-new (opaque outside the thread;
    None when a client or producer starts the thread)."""
    owner: str | None = None
    """The principal the thread belongs to if this input starts it (None: unowned)."""


class ThreadSettings(Protocol):
    """The deployment settings a thread starts with (`settings.Settings` has them)."""

    @property
    def input_expires_in(self) -> timedelta: ...
    @property
    def max_interrupts_per_run(self) -> int: ...
    @property
    def max_pending_interrupts(self) -> int: ...
    @property
    def tool_max_attempts(self) -> int: ...
    @property
    def index_runs(self) -> bool: ...
    @property
    def audit_in_task(self) -> bool: ...
    @property
    def thread_history_limit(self) -> int: ...


def thread_input(
    settings: ThreadSettings, agent: str, thread_id: str, owner: str | None = None
) -> ThreadInput:
    """How every process starts a thread (gateway and producers alike); `owner` is who it
    belongs to (the gateway: the starting run's principal), except that `inbox:P` is P's
    and the inbox agent's, whatever the starter asked."""
    return ThreadInput(
        owner=natural_owner(thread_id) or owner,
        thread_id=thread_id,
        agent=natural_agent(thread_id) or agent,
        config=AgentConfig(
            input_expires_in_seconds=settings.input_expires_in.total_seconds(),
            max_interrupts_per_run=settings.max_interrupts_per_run,
            max_pending_interrupts=settings.max_pending_interrupts,
            tool_max_attempts=settings.tool_max_attempts,
        ),
        index_runs=settings.index_runs,
        audit_in_task=settings.audit_in_task,
        history_limit=settings.thread_history_limit,
    )


STOPPED_METADATA_KEY = "ag-ui-temporal:stopped"
"""`metadata` key (value `true`) of an assistant message whose run was stopped while it was
being written: on the message in the transcript (so on `MESSAGES_SNAPSHOT`s and hydrated
`UIMessage`s) and on its `TEXT_MESSAGE_END`, whose metadata TanStack's client merges onto
the message."""


class CancelRefusal(StrEnum):
    """Why the `cancel_run` validator refuses (the `ApplicationError.type`; defined once for
    the raising and the answering side). Nothing is recorded for either."""

    UNKNOWN_RUN = "UnknownRun"
    """No such run in the thread, or a caller who may not act on the thread: the same."""
    NOT_SENDER = "NotSender"
    """The caller may act on the thread (it sees the run) but did not send the run and is no
    admin (`may_stop`)."""
    RUN_ENDED = "RunEnded"
    """The run has ended: stopping it would change nothing."""


class CancelRun(BaseModel):
    """Input of the `cancel_run` update: stop a run of the thread that is still going, or
    one accepted and waiting behind another run of the thread."""

    run_id: str
    principal: str | None = None
    """Who asks (the gateway's auth layer): whoever may act on the thread, and stop the run
    (`may_stop`: its sender or an admin)."""
    groups: list[str] = Field(default_factory=list)
    admin: bool = False
    """One of the gateway's admins (`THREAD_ADMINS`), as for `RunRequest.admin`."""


class CancelRunResult(BaseModel):
    """Result of the `cancel_run` update, once the run has ended."""

    status: Literal["cancelled", "finished"]
    """`cancelled`: this stop ended the run (`RUN_ERROR` `RUN_CANCELLED`); `finished`: the
    run's agent was done when the stop came, and it ended on its own, unchanged."""


class DropRuns(BaseModel):
    """Input of the `agui_drop_runs` signal: runs the thread refuses from now on (each gets
    `DROPPED_RUN`), unless it already ran them."""

    run_ids: list[str]


DROPPED_RUNS_KEPT = 20
"""Dropped run ids a thread remembers (the latest), also across continue-as-new."""


class RunEventsQuery(BaseModel):
    """Input of the `run_events` query."""

    run_id: str
    """The run id the client sent (a run and its continuations share it)."""
    after: int = -1
    """Return the run's events whose offset is greater than this."""
    brings: str | None = None
    """The run sent under `run_id` with this `run_digest` (the POST that sent it follows its
    own run, also while a continuation of it waits to begin); None: the newest run sent
    under `run_id` (a join)."""


class RunEventsPage(BaseModel):
    """Answer of the `run_events` query."""

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
    brings: str | None = None
    """The run's `run_digest` (None: a run recorded before digests, or none found): its
    update id, which a join waits on for the run's end."""
