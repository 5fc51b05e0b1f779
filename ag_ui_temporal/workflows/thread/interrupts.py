"""An interrupt's life in a thread, and the one type that owns it: `InterruptRecord`.

The states an interrupt can be in, and the transitions between them (each a method below,
each named by the audit record it reaches)::

    asked ─────────────────────────┐          (by the thread's agent, in a run)
    offered ── deliver ──────────> open       (by an external owner; a run shows it)
       │                             ├── answer ───> resolved | cancelled
       │                             ├── expire ───> expired, lapsed
       │                             └── withdraw ─> withdrawn
       ├── expire ───> expired       (no client saw it: nothing awaits it)
       └── withdraw ─> withdrawn
    redeliver: a later run shows it again (its status stays; the run that binds it moves)

- **open** awaits an answer: a resume must cover it (`awaiting_answer`).
- **expired, lapsed** and **withdrawn** after delivery are settled: they block nothing, a
  cancel acknowledges them (`answer` keeps their status), a resolve is refused.
- **resolved** approval of a call of the client's own tool is **handed to the client**
  (`handed_to_client`): the client runs the call; its result comes in a later run.
- **answered at once**: an asked call a standing decision covers is answered as it is opened
  (`answer`, `via` "standing": `thread._standing`), never delivered: no client sees it.

Nothing outside this module assigns an interrupt's status. Expiry is decided in one place,
`InterruptView.due` (the gateway reads the same rule off the view): the thread's timers,
a run that arrives after a deadline and the resume's check all ask it.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from ag_ui_temporal.workflows.contract import (
    PENDING_STATUSES,
    DecisionVia,
    InterruptStatus,
    InterruptView,
    OfferInterrupt,
    ResumeItem,
    WireDict,
)
from ag_ui_temporal.workflows.contract.resume import answer_digest
from ag_ui_temporal.workflows.contract.tools import approval

CLIENT_TOOL_KEY: Final = "clientTool"
"""`InterruptRecord.data` key marking the approval of a call of the client's own tool
(`agents._client_tools`): once approved, the client runs the call and sends its result."""

Stage = Literal["asked", "offered", "delivered", "answered", "expired", "withdrawn"]
"""A stage of an interrupt's life: the kind of the audit record that marks it."""
ENDS: Final[dict[InterruptStatus, Stage]] = {
    InterruptStatus.RESOLVED: "answered",
    InterruptStatus.CANCELLED: "answered",
    InterruptStatus.EXPIRED: "expired",
    InterruptStatus.WITHDRAWN: "withdrawn",
}
"""The stage that ends an interrupt's life, by its status."""


class InterruptRecord(InterruptView):
    """An interrupt as the thread keeps it (a `resume.Answerable`), and every change of it."""

    data: WireDict = Field(default_factory=dict)
    """What the agent needs to continue once the interrupt settles (e.g. the tool call)."""
    audited: list[str] = Field(default_factory=list)
    """The stages of its life the store's audit trail holds (`thread._audit`)."""
    acted: bool = False
    """The agent went on from its answer (`agents.base.batch`): a later batch of the same run
    (one that went on at once from standing decisions) is not this one's."""

    # -- how a life starts ----------------------------------------------------------

    @classmethod
    def asked(cls, interrupt: WireDict, run_id: str, data: WireDict) -> InterruptRecord:
        """Asked by the thread's agent in run `run_id`: open at once."""
        return cls(
            interrupt=interrupt, run_id=run_id, expires_at=interrupt.get("expiresAt"), data=data
        )

    @classmethod
    def offered(cls, offer: OfferInterrupt) -> InterruptRecord:
        """Offered by an external owner: no run has delivered it yet (`run_id` "")."""
        return cls(
            interrupt=offer.interrupt,
            run_id="",
            status=InterruptStatus.OFFERED,
            expires_at=offer.interrupt.get("expiresAt"),
            owner=offer.owner_workflow_id,
            allowed_resolvers=offer.allowed_resolvers,
        )

    # -- transitions --------------------------------------------------------------

    def deliver(self, run_id: str) -> None:
        """offered -> open, bound to run `run_id`, which shows it to the client."""
        assert self.status == InterruptStatus.OFFERED, self.status
        self.status, self.run_id = InterruptStatus.OPEN, run_id

    def redeliver(self, run_id: str) -> None:
        """Shown again, by run `run_id`: its status stays, only the run that binds it (the
        client's `interruptedRunId`) moves."""
        assert self.run_id != "", "an offer is delivered first"
        self.run_id = run_id

    def answer(
        self, answer: ResumeItem, run_id: str, principal: str | None, via: DecisionVia, at: str
    ) -> None:
        """open -> resolved | cancelled, recording who answered, how and when. An expired or
        withdrawn one keeps its status (and an expired one when it expired): a cancel only
        acknowledges it."""
        self.resolution = answer
        self.resolved_by_run = run_id
        self.resolved_by = principal
        if self.status == InterruptStatus.OPEN:
            self.status = InterruptStatus(answer.status)
            self.resolved_via, self.resolved_at = via, at

    def expire(self, at: str) -> bool:
        """offered | open -> expired at `at`; whether it did (a run may have settled it
        meanwhile). A delivered one is `lapsed`: settled, no answer awaited."""
        if self.status not in PENDING_STATUSES:
            return False
        self.status, self.resolved_at = InterruptStatus.EXPIRED, at
        if self.run_id != "":  # an offer no client saw awaits nothing
            self.lapsed = True
        return True

    def withdraw(self) -> bool:
        """offered | open | expired and unanswered -> withdrawn; whether it was (an answered
        one stays answered)."""
        if self.status in PENDING_STATUSES or (
            self.status == InterruptStatus.EXPIRED and self.resolution is None
        ):
            self.status = InterruptStatus.WITHDRAWN
            return True
        return False

    # -- what the rest of the thread asks -------------------------------------------

    @property
    def settled(self) -> bool:
        """Takes no answer but a repeat of the one applied: neither awaiting one nor withdrawn
        or lapsed without a client's cancel yet (a cancel acknowledges either; a resolve of
        either is refused by its status)."""
        closed = self.status == InterruptStatus.WITHDRAWN or self.lapsed
        unacknowledged = closed and self.resolution is None
        return not self.awaiting_answer and not unacknowledged

    @property
    def handed_to_client(self) -> bool:
        """An approved call of a client's own tool: the client runs it, and its result comes
        in a later run."""
        answer = self.resolution
        return (
            bool(self.data.get(CLIENT_TOOL_KEY))
            and self.status == InterruptStatus.RESOLVED
            and answer is not None
            and (decided := approval(answer.payload)) is not None
            and decided.approved
        )

    @property
    def answer_digest(self) -> str | None:
        applied = self.resolution
        return None if applied is None else answer_digest(applied.status, applied.payload)

    # -- its audit records ----------------------------------------------------------

    def stages(self) -> list[Stage]:
        """The stages it has reached, in order: one audit record each (`thread._audit`)."""
        reached: list[Stage] = ["offered" if self.owner is not None else "asked"]
        answered_at_once = self.resolved_via == "standing"  # no client saw it
        if self.run_id and not answered_at_once:
            reached.append("delivered")
        if (end := ENDS.get(self.status)) is not None:
            reached.append(end)
        return reached

    def unaudited(self) -> bool:
        """Whether the store lacks a stage it reached (a tool's result is not awaited: it
        may never come)."""
        return any(stage not in self.audited for stage in self.stages())
