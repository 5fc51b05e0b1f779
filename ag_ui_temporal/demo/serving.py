"""Which agents a process serves: the demo assistant (on the model `LLM_MODEL` names) and
the agents the modules in `AGENT_MODULES` register when imported."""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent
from pydantic_ai.models import Model

from ag_ui_temporal.agents.catalog import AgentCard, import_agent_modules
from ag_ui_temporal.agents.delegation import delegated_agents
from ag_ui_temporal.agents.models import resolve_model
from ag_ui_temporal.agents.registry import all_registered, register, registered
from ag_ui_temporal.demo.assistant import build_assistant
from ag_ui_temporal.demo.offline import offline_model
from ag_ui_temporal.settings import Settings

ASSISTANT = AgentCard(
    "assistant",
    "Demo assistant (pydantic-ai; an offline model unless LLM_MODEL is set): emails with "
    "approval, the quarterly report form, expenses, a date picked in the browser.",
    approve_with_edits=True,
)


def serve_agents(settings: Settings) -> list[Agent[Any, Any]]:
    """Register what this deployment serves (once per process) and return every agent, those
    that `delegate` tools run included (the worker serves their activities too). The worker
    and the gateway both call it: the gateway lists what the workers run."""
    if registered(ASSISTANT.name) is None:
        register(
            build_assistant(_model(settings)),
            description=ASSISTANT.description,
            approve_with_edits=ASSISTANT.approve_with_edits,
            refusals_end_the_turn=True,
            workflow_agent="ag_ui_temporal.demo.workflow_agent:AssistantAgent",
        )
    import_agent_modules(settings)
    agents = [entry.agent for entry in all_registered().values()]
    return agents + [agent for agent in delegated_agents() if agent not in agents]


def _model(settings: Settings) -> Model:
    """`LLM_MODEL`, or the offline demo model when it is unset."""
    if settings.llm_model:
        return resolve_model(settings)
    return offline_model(settings.offline_model_word_delay)
