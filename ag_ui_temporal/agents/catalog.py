"""What the gateway serves at `/agents`: the library's own `inbox`, then every agent the
process registered (those `AGENT_MODULES` register on import included), with what each can
do (`GET /agents/{agent}/capabilities`)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from ag_ui_temporal.agents.registry import all_registered, all_registered_graphs
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


def import_agent_modules(settings: Settings) -> None:
    """Import each of `AGENT_MODULES`: its `register(...)` calls run on import."""
    for module in settings.agent_modules:
        importlib.import_module(module)


def catalog(settings: Settings) -> dict[str, AgentCard]:
    """Every agent name `POST /agents/{agent}` serves (imports `AGENT_MODULES`)."""
    import_agent_modules(settings)
    cards = {INBOX.name: INBOX}
    for name, entry in all_registered().items():
        cards.setdefault(name, AgentCard(name, entry.description, entry.approve_with_edits))
    for name, graph in all_registered_graphs().items():  # LangGraph graphs (`register_graph`)
        cards.setdefault(name, AgentCard(name, graph.description, graph.approve_with_edits))
    return cards
