"""The interface between the thread workflow and the agent that talks in it.

An agent is event-driven rather than a long-lived coroutine: everything it
needs to continue lives in the thread's data (interrupt records carry the
agent's own `data`). So a thread can continue-as-new, or be picked up by new
worker code, while it waits days for a person.
"""

from __future__ import annotations

from typing import Final, Protocol

from temporalio.contrib.workflow_streams import PublishInput

from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord
from ag_ui_temporal.workflows.thread.turn import Turn

UNATTENDED_ROUNDS: Final = 10
"""How often an agent resumed by an expiry between runs may ask again (each question is
answered at once as expired: nobody is there) before the thread stops resuming it."""


def siblings(turn: Turn, settled: list[InterruptRecord], key: str) -> list[InterruptRecord]:
    """Every interrupt the agent opened (its own: `key` in its `data`) in the runs that asked
    these: one batch, which the agent answers once all of it is settled (rule 3)."""
    runs = {record.run_id for record in settled}
    return [
        record
        for record in turn.log.state.interrupts
        if record.run_id in runs and record.owner is None and key in record.data
    ]


class Agent(Protocol):
    """Deterministic workflow-side agent code. I/O belongs in activities
    (`workflow.execute_activity`)."""

    async def on_user_message(self, turn: Turn, text: str) -> None:
        """A new user message arrived in a run."""
        ...

    async def on_client_results(self, turn: Turn) -> None:
        """The client ran tools of its own the agent called, and sent their results
        (tool messages, already in the transcript)."""
        ...

    def on_stream(self, batch: PublishInput) -> None:
        """Deltas a model activity of this agent published (the thread's stream signal)."""
        ...

    async def on_settled(self, turn: Turn, settled: list[InterruptRecord]) -> None:
        """Interrupts this agent opened were resolved, cancelled or expired.

        During a resume all of one run's answers arrive together; an expiry arrives
        between runs (`turn.run_id is None`), when only the transcript can change.
        """
        ...

    def on_run_end(
        self, turn: Turn, *, posted: int, settled: int, waiting: list[InterruptRecord]
    ) -> None:
        """Called (synchronously) at the end of every run, after offered interrupts were
        delivered: `posted` messages were streamed, `settled` answers applied, `waiting`
        interrupts await an answer. It may still speak (`turn.say`); it must not await."""
        ...
