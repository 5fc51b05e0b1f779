"""The demo agent `assistant` in the workflow: a pydantic-ai agent (`demo.assistant`), and
the scripted assistant (`demo.legacy`) for the threads parked on it."""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from temporalio.contrib.workflow_streams import PublishInput

    from ag_ui_temporal.workflows.thread.state import InterruptRecord

from ag_ui_temporal.demo.legacy import LegacyAssistant
from ag_ui_temporal.workflows.patches import LLM_ASSISTANT_PATCH, patched
from ag_ui_temporal.workflows.thread.agents.llm import LlmAgent
from ag_ui_temporal.workflows.thread.turn import Turn


class AssistantAgent:
    def __init__(self) -> None:
        self.llm = LlmAgent("assistant")
        self.legacy = LegacyAssistant()

    def on_stream(self, batch: PublishInput) -> None:
        self.llm.on_stream(batch)

    async def on_user_message(self, turn: Turn, text: str) -> None:
        if patched(LLM_ASSISTANT_PATCH):
            await self.llm.on_user_message(turn, text)
        else:  # a history recorded without the patch replays the scripted model's answer
            await self.legacy.on_user_message(turn, text)

    async def on_client_results(self, turn: Turn) -> None:
        await self.llm.on_client_results(turn)

    async def on_settled(self, turn: Turn, settled: list[InterruptRecord]) -> None:
        """Each interrupt is carried out by the agent that opened it."""
        if legacy := [record for record in settled if "llm" not in record.data]:
            await self.legacy.on_settled(turn, legacy)
        if mine := [record for record in settled if "llm" in record.data]:
            await self.llm.on_settled(turn, mine)

    def on_run_end(
        self, turn: Turn, *, posted: int, settled: int, waiting: list[InterruptRecord]
    ) -> None:
        """Both said what they had to while they ran."""
