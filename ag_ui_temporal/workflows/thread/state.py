"""The thread's private state: what it carries across continue-as-new.

Only the thread workflow and its helpers read these models; readers outside get
a `ThreadView` (`workflows.contract.view`), whose fields these extend.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, Field

from ag_ui_temporal.workflows.contract import (
    InterruptView,
    RunView,
    ThreadView,
    WireDict,
    effective_owner,
)
from ag_ui_temporal.workflows.contract.standing import StandingDecision
from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord


class RunRecord(RunView):
    """A run of the thread, kept so re-sent and replayed runs get the same answer.

    `run_id` is the run's own id in the thread: the client's, but for a continuation sent
    under the id of the run it continues (`ThreadState.sent_as`)."""

    first_offset: int
    last_offset: int = -1
    brings: str | None = None
    """What the run brought (`contract.runs.run_digest`): the same POST sent again is this
    run, another body under its id a continuation or refused. `THREADS_OWN` for a run the
    thread started itself; None for a run recorded before digests (a re-send is taken as
    the same run, as then)."""
    sent_by: str | None = None
    """The principal that sent the run, who may stop it (`may_stop`); None: the thread's own
    run, or a record from before runs named their sender."""


THREADS_OWN: Final = "thread"
"""`RunRecord.brings` of a run the thread started itself (no client sent it: no body is it)."""


class ThreadState(BaseModel):
    """Everything the thread owns: the continue-as-new state."""

    thread_id: str
    agent: str
    messages: list[WireDict] = Field(default_factory=list)
    """The window: the newest messages, at positions `archived`, `archived + 1`, ..."""
    archived: int = 0
    """How many earliest messages live only in the store's transcript archive."""
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
    refused_invalid: dict[str, str] = Field(default_factory=dict)
    """Of `refused`, those refused as no valid interrupt (a hand-made signal): id -> why."""
    dropped_runs: list[str] = Field(default_factory=list)
    """Runs the gateway's stuck-thread watch dropped (the latest `DROPPED_RUNS_KEPT`): any
    copy of them that arrives later is refused (`DROPPED_RUN`)."""
    sent_as: dict[str, str] = Field(default_factory=dict)
    """Runs recorded under an id of their own -> the run id their client sent, which the
    client sees on their events, bindings and every view (`client_run_id`): a continuation,
    sent under the id of the run whose interrupts it answers, is a run of its own. Kept while
    a run or an interrupt the state holds names it."""
    agent_data: WireDict = Field(default_factory=dict)
    """What the thread's agent keeps between runs beside the transcript: a LangGraph graph's
    checkpoint (`agents._graph_checkpoint`, bounded)."""
    standing: list[StandingDecision] = Field(default_factory=list)
    """Its standing decisions, oldest first (`thread._standing`; at most `MAX_STANDING`)."""

    @property
    def effective_owner(self) -> str | None:
        return effective_owner(self.owner, self.thread_id)

    def client_run_id(self, run_id: str) -> str:
        """The id the client sent for run `run_id` (the same, but for a continuation's)."""
        return self.sent_as.get(run_id, run_id)

    def view(self) -> ThreadView:
        """The `thread` query's answer: no event log, no agent data, no bookkeeping; runs
        by the ids their clients sent."""
        sent = self.client_run_id
        return ThreadView(
            thread_id=self.thread_id,
            agent=self.agent,
            messages=self.messages,
            archived=self.archived,
            state=self.state,
            interrupts=[
                InterruptView.model_validate(
                    {
                        **r.model_dump(exclude={"data"}),
                        "run_id": sent(r.run_id),
                        "resolved_by_run": r.resolved_by_run and sent(r.resolved_by_run),
                    }
                )
                for r in self.interrupts
            ],
            runs=[
                RunView(run_id=sent(r.run_id), parent_run_id=r.parent_run_id, finished=r.finished)
                for r in self.runs
            ],
            owner=self.owner,
            standing=self.standing,
        )
