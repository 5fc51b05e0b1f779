"""What the gateway serves at `/agents`: the built-in agents and those `AGENT_MODULES`
register, with what each can do (`GET /agents/{agent}/capabilities`)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from ag_ui_temporal.agents.registry import all_registered
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import INBOX_AGENT


@dataclass(frozen=True)
class AgentCard:
    name: str
    description: str
    approve_with_edits: bool


INBOX = AgentCard(
    INBOX_AGENT,
    "Delivers what other workflows offered or posted to the thread (no model, no tools).",
    approve_with_edits=False,
)
"""The library's own agent. It delivers what producers ask; their schemas, not tool calls,
say what an answer holds, so it promises no approve-with-edits."""

DEMO_ASSISTANT = AgentCard(
    "assistant",
    "Demo assistant (pydantic-ai; an offline model unless LLM_MODEL is set): emails with "
    "approval, the quarterly report form, expenses, a date picked in the browser.",
    approve_with_edits=True,
)
"""The demo's agent, which this repository's workers serve (`ag_ui_temporal.demo.serving`
registers it with this card). Listed here because a gateway process does not run that
registration, so it could not list the agent from the registry."""

BUILT_IN = {card.name: card for card in (DEMO_ASSISTANT, INBOX)}
"""The agents every gateway serves, in the order `GET /agents` lists them."""


def catalog(settings: Settings) -> dict[str, AgentCard]:
    """Every agent name `POST /agents/{agent}` serves (imports `AGENT_MODULES`)."""
    for module in settings.agent_modules:
        importlib.import_module(module)
    cards = dict(BUILT_IN)
    for name, entry in all_registered().items():
        cards.setdefault(name, AgentCard(name, entry.description, entry.approve_with_edits))
    return cards
