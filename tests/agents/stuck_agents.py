"""A workflow-side agent whose workflow tasks fail in its thread's first Temporal run only: a
fault a reset cures (as a task that failed on a worker's deadlock timeout under load would),
so what a reset does to a thread can be seen deterministically. Registered by
`test_stuck_threads.py` (`register(..., workflow_agent=...)`): its threads import it inside
the workflow sandbox."""

from __future__ import annotations

from temporalio import workflow

from ag_ui_temporal.workflows.thread.agents.llm import LlmAgent
from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord
from ag_ui_temporal.workflows.thread.turn import Turn

NAME = "t-stuck"
FAIL = "fail in the first run"
"""A user message whose first workflow task fails, until the thread is reset."""


def _first_run() -> bool:
    info = workflow.info()
    return info.run_id == info.first_execution_run_id


class FailsInTheFirstRun(LlmAgent):
    def __init__(self) -> None:
        super().__init__(NAME)

    async def on_user_message(self, turn: Turn, text: str) -> None:
        if text == FAIL and _first_run():
            raise RuntimeError("a fault of the thread's first Temporal run")
        await super().on_user_message(turn, text)

    def on_run_end(
        self, turn: Turn, *, posted: int, settled: int, waiting: list[InterruptRecord]
    ) -> None:
        # a producer's offer, delivered by a run of the thread's own: no client waits
        if any(record.owner is not None for record in waiting) and _first_run():
            raise RuntimeError("a fault of the thread's first Temporal run")
        super().on_run_end(turn, posted=posted, settled=settled, waiting=waiting)
