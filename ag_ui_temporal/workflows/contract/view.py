"""The `thread` query's answer: what readers (hydration, tests, operators) see of a thread.

A view of the thread's private state (`workflows.thread.state`), so that state can
change without changing the wire. Field names are the state's where they
overlap, so the view also parses the whole state an older worker answers with
(extra fields are ignored) during a rolling deploy.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Final

from pydantic import BaseModel, Field

from ag_ui_temporal.workflows.contract.access import effective_owner
from ag_ui_temporal.workflows.contract.names import WireDict
from ag_ui_temporal.workflows.contract.runs import DecisionVia, ResumeItem
from ag_ui_temporal.workflows.contract.standing import StandingDecision


class InterruptStatus(StrEnum):
    """Where an interrupt is in its life (as the thread records and shows it)."""

    OFFERED = "offered"
    """Offered by an external owner; delivered (and opened) by the thread's next run."""
    OPEN = "open"
    RESOLVED = "resolved"
    CANCELLED = "cancelled"
    EXPIRED = "expired"
    WITHDRAWN = "withdrawn"
    """Taken back by its owner: no longer answerable, no longer awaited."""


PENDING_STATUSES: Final = (InterruptStatus.OFFERED, InterruptStatus.OPEN)
"""An interrupt still waiting for someone: offered, or open (what `max_pending_interrupts`
counts, what expires, what an agent still waits on)."""


class InterruptView(BaseModel):
    """An interrupt of the thread, without what only the agent needs to continue."""

    interrupt: WireDict
    """The AG-UI `Interrupt` wire dict, binding included, exactly as clients saw it."""
    run_id: str
    """The run that delivered it (TanStack's `interruptedRunId`); "" while only offered."""
    status: InterruptStatus = InterruptStatus.OPEN
    expires_at: str | None = None
    resolution: ResumeItem | None = None
    resolved_by_run: str | None = None
    """The run that applied the resolution."""
    owner: str | None = None
    """Workflow id of the external owner the resolution is routed to (None: the agent's)."""
    allowed_resolvers: list[str] | None = None
    """Principals (or `group:G`) allowed to answer (None: anyone who may act on the thread)."""
    resolved_by: str | None = None
    """The principal whose run applied the resolution (when the gateway knew it)."""
    resolved_via: DecisionVia | None = None
    """How that answer came: in a chat, by a decision link, by the decision API (None: no
    one answered it, or it was answered before the thread recorded how)."""
    resolved_at: str | None = None
    """When it settled (ISO 8601, workflow time): answered, cancelled or expired (None:
    unsettled, withdrawn, or settled before the thread recorded when)."""
    lapsed: bool = False
    """Expired, and settled by it: nothing awaits its answer, new input is taken (a cancel
    still acknowledges it; a resolve is `INTERRUPT_EXPIRED`). False on an offer that expired
    before any run delivered it (no client saw it)."""

    @property
    def id(self) -> str:
        return str(self.interrupt["id"])

    @property
    def awaiting_answer(self) -> bool:
        """Open, or expired (but not `lapsed`) and not yet acknowledged by a cancel: a resume
        must cover it."""
        return (
            self.status in (InterruptStatus.OPEN, InterruptStatus.EXPIRED)
            and self.resolution is None
            and self.run_id != ""  # offered and expired before any run delivered it
            and not self.lapsed
        )

    @property
    def deadline(self) -> datetime | None:
        """When it expires, while it may still (offered or open with an `expiresAt`)."""
        if self.status not in PENDING_STATUSES or self.expires_at is None:
            return None
        return datetime.fromisoformat(self.expires_at)

    def due(self, now: datetime) -> bool:
        """Whether it expires at `now`: its `deadline` has come. The one rule of expiry: the
        thread's timers, a run that arrives after a deadline and the check of a resume (here
        and in the gateway) all ask it."""
        return (deadline := self.deadline) is not None and now >= deadline

    def overdue(self, now: datetime) -> bool:
        """Still open though it is `due` at `now`: its timer is due, and the thread expires it
        before it takes the next run, so nobody may answer it any more."""
        return self.status == InterruptStatus.OPEN and self.due(now)


class RunView(BaseModel):
    """A run of the thread."""

    run_id: str
    parent_run_id: str | None = None
    finished: bool = False


class ThreadView(BaseModel):
    """Answer of the `thread` query: transcript, state, interrupts and runs."""

    thread_id: str
    agent: str
    messages: list[WireDict] = Field(default_factory=list)
    """The window: the newest messages (older ones are in the store's transcript archive)."""
    archived: int = 0
    """How many earliest messages live only in the archive (the position of `messages[0]`)."""
    state: Any = Field(default_factory=dict)
    interrupts: list[InterruptView] = Field(default_factory=list)
    runs: list[RunView] = Field(default_factory=list)
    """The runs the thread still remembers, oldest first."""
    owner: str | None = None
    """The principal that created the thread (None: unowned)."""
    standing: list[StandingDecision] = Field(default_factory=list)
    """Its standing decisions (`contract.standing`), also any past its `expires_at`."""

    @property
    def effective_owner(self) -> str | None:
        """Who may see and act on the thread (see `workflows.contract.access`)."""
        return effective_owner(self.owner, self.thread_id)

    @property
    def awaiting(self) -> list[InterruptView]:
        """The interrupts a resume must answer, in the order they were opened."""
        return [record for record in self.interrupts if record.awaiting_answer]

    def awaiting_at(self, now: datetime) -> list[InterruptView]:
        """`awaiting`, less those `overdue` at `now`: what a client may still answer."""
        return [record for record in self.awaiting if not record.overdue(now)]

    @property
    def active_run(self) -> RunView | None:
        """The run going on now, if any."""
        return next((run for run in reversed(self.runs) if not run.finished), None)
