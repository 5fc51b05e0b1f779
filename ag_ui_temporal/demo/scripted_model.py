"""The scripted "model" of the scripted assistant (`demo.legacy`).

It runs inline in the workflow, so the threads recorded with it replay through it; new
threads never use it. Real models, and the offline demo model, are pydantic-ai models
(`agents.models`, docs/agents.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ag_ui_temporal.demo.sentences import (
    EMAIL,
    HELP,
    expense_args,
    find_emails,
    report_or_email_calls,
)
from ag_ui_temporal.workflows.contract import WireDict
from ag_ui_temporal.workflows.patches import EXPENSE_PATCH, patched
from ag_ui_temporal.workflows.thread.turn import message_text

# The sentences are read in `demo.sentences` (shared with the offline pydantic-ai model);
# EMAIL, HELP and find_emails are exported beside the model that reads them, for its tests.
__all__ = ["EMAIL", "HELP", "Model", "ModelReply", "ScriptedModel", "find_emails"]


@dataclass
class ModelReply:
    text: str | None = None
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """(tool name, arguments) pairs."""


class Model(Protocol):
    async def respond(self, messages: list[WireDict]) -> ModelReply:
        """The next assistant step for a transcript ending in a user message."""
        ...


class ScriptedModel:
    """Understands the demo's sentences; answers anything else with help."""

    async def respond(self, messages: list[WireDict]) -> ModelReply:
        text = _last_user_text(messages)
        expense = expense_args(text)
        if expense is not None and patched(EXPENSE_PATCH):
            return ModelReply(tool_calls=[("submitExpense", expense)])
        calls = report_or_email_calls(text)
        return ModelReply(tool_calls=calls) if calls else ModelReply(text=HELP)


def _last_user_text(messages: list[WireDict]) -> str:
    users = [message for message in messages if message.get("role") == "user"]
    return message_text(users[-1]) if users else ""
