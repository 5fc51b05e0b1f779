"""What the gateway serves at `/agents`: the built-in agents and those `AGENT_MODULES`
register, with what each can do (`GET /agents/{agent}/capabilities`)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from ag_ui_temporal.agents.registry import all_registered
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import AGENTS


@dataclass(frozen=True)
class AgentCard:
    name: str
    description: str
    approve_with_edits: bool


BUILT_IN = {
    "assistant": AgentCard("assistant", AGENTS["assistant"], approve_with_edits=True),
    "inbox": AgentCard("inbox", AGENTS["inbox"], approve_with_edits=False),
}
"""The inbox delivers what producers ask; their schemas, not tool calls, say what an
answer holds, so it promises no approve-with-edits."""


def catalog(settings: Settings) -> dict[str, AgentCard]:
    """Every agent name `POST /agents/{agent}` serves (imports `AGENT_MODULES`)."""
    for module in settings.agent_modules:
        importlib.import_module(module)
    cards = dict(BUILT_IN)
    for name, entry in all_registered().items():
        cards.setdefault(name, AgentCard(name, entry.description, entry.approve_with_edits))
    return cards
