"""`register(..., workflow_agent=...)`: the thread runs the named workflow-side agent, and a
name that does not resolve is refused when the agent is registered, not in a workflow task."""

from __future__ import annotations

import importlib

import pytest
from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel

from ag_ui_temporal import ThreadDeps, register, registered, thread_capabilities
from tests.conftest import DEMO


def _agent(name: str) -> Agent[ThreadDeps, str]:
    return Agent(TestModel(), name=name, deps_type=ThreadDeps, capabilities=thread_capabilities())


@pytest.mark.parametrize(
    "path",
    ["tests.agents.stuck_agents:NoSuchAgent", "no_such_module_of_ours:Agent"],
)
def test_a_workflow_agent_that_does_not_resolve_is_refused(path: str) -> None:
    name = f"t-registry-{abs(hash(path))}"
    with pytest.raises((ValueError, ModuleNotFoundError)):
        register(_agent(name), workflow_agent=path)
    assert registered(name) is None


def test_the_demo_assistant_is_the_usual_pydantic_ai_agent_in_its_threads() -> None:
    from ag_ui_temporal.workflows.thread.agents import agent_for
    from ag_ui_temporal.workflows.thread.agents.llm import LlmAgent

    importlib.import_module(DEMO)  # as `AGENT_MODULES` does (tests/conftest.py did already)
    entry = registered("assistant")
    assert entry is not None
    assert entry.workflow_agent is None
    assert type(agent_for("assistant")) is LlmAgent
