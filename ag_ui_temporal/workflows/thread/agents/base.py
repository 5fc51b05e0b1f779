"""The interface between the thread workflow and the agent that talks in it.

An agent is event-driven rather than a long-lived coroutine: everything it
needs to continue lives in the thread's data (interrupt records carry the
agent's own `data`). So a thread can continue-as-new, or be picked up by new
worker code, while it waits days for a person.
"""

from __future__ import annotations

from typing import Protocol

from temporalio.contrib.workflow_streams import PublishInput

from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord
from ag_ui_temporal.workflows.thread.turn import Turn


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
