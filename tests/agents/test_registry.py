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
    ["ag_ui_temporal.demo.workflow_agent:NoSuchAgent", "no_such_module_of_ours:Agent"],
)
def test_a_workflow_agent_that_does_not_resolve_is_refused(path: str) -> None:
    name = f"t-registry-{abs(hash(path))}"
    with pytest.raises((ValueError, ModuleNotFoundError)):
        register(_agent(name), workflow_agent=path)
    assert registered(name) is None


def test_the_demo_registers_its_workflow_side_assistant() -> None:
    from ag_ui_temporal.demo.workflow_agent import AssistantAgent
    from ag_ui_temporal.workflows.thread.agents import agent_for

    importlib.import_module(DEMO)  # as `AGENT_MODULES` does (tests/conftest.py did already)
    entry = registered("assistant")
    assert entry is not None
    assert entry.workflow_agent == "ag_ui_temporal.demo.workflow_agent:AssistantAgent"
    assert isinstance(agent_for("assistant"), AssistantAgent)  # outside a sandbox: the import
