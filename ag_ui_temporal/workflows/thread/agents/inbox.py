"""The agent `inbox`: no model, no tools. Its runs deliver what producers sent.

Other workflows offer interrupts and post messages to the thread (see
`workflows.producers`); the thread delivers them by a run of its own as they arrive
(every waiting item at once: `thread._delivery`), and each may be answered on its own
(a partial resume). The inbox only speaks when a run brings nothing and nothing waits
for an answer.
"""

from __future__ import annotations

from temporalio.contrib.workflow_streams import PublishInput

from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord
from ag_ui_temporal.workflows.thread.turn import Turn

NOTHING_WAITS = "Nothing is waiting for you here."


class InboxAgent:
    async def on_user_message(self, turn: Turn, text: str) -> None:
        """The inbox has nothing to say to a message; `on_run_end` reports what waits."""

    async def on_client_results(self, turn: Turn) -> None:
        """The inbox offers no tools."""

    def on_stream(self, batch: PublishInput) -> None:
        """The inbox has no model."""

    async def on_settled(self, turn: Turn, settled: list[InterruptRecord]) -> None:
        """The inbox opens no interrupts of its own; producers hear their answers directly."""

    def on_run_end(
        self, turn: Turn, *, posted: int, settled: int, waiting: list[InterruptRecord]
    ) -> None:
        """Say so plainly when the run delivered nothing, answered nothing, and nothing waits."""
        if not posted and not settled and not waiting:
            turn.say(NOTHING_WAITS)
