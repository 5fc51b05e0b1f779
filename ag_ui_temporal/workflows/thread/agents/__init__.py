"""Agents that can run in a thread, by name: the built-in ones, then those registered on the
worker: pydantic-ai agents (`agents.register`), LangGraph graphs, OpenAI Agents SDK and Google ADK
agents."""

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.agents.registry import (
        registered,
        registered_adk_agent,
        registered_graph,
        registered_openai_agent,
        workflow_agent_class,
    )
    from ag_ui_temporal.workflows.contract import INBOX_AGENT, AgentNotServed

from ag_ui_temporal.workflows.thread.agents.base import Agent
from ag_ui_temporal.workflows.thread.agents.inbox import InboxAgent
from ag_ui_temporal.workflows.thread.agents.llm import AgentFailed, LlmAgent

BUILT_IN: dict[str, type[Agent]] = {INBOX_AGENT: InboxAgent}
"""The library's own agents; every other one is registered (`agents.register`)."""


def agent_for(name: str) -> Agent:
    """The thread's agent. A name this worker does not serve (an agent the gateway has, on a
    worker not yet rolled out) fails the workflow task with `AgentNotServed`: Temporal retries
    it until a worker that has the agent takes it, and the gateway's stuck-thread watch, which
    knows the failure by that type, waits for it instead of dropping the run."""
    if name in BUILT_IN:
        return BUILT_IN[name]()
    if registered_graph(name) is not None:
        return _graph_agent(name)
    if registered_openai_agent(name) is not None:
        return _openai_agent(name)
    if registered_adk_agent(name) is not None:
        return _adk_agent(name)
    entry = registered(name)
    if entry is None:
        raise AgentNotServed(f"no agent {name!r} on this worker")
    if entry.workflow_agent:
        agent: type[Agent] = workflow_agent_class(entry.workflow_agent)
        return agent()
    return LlmAgent(name)


def _graph_agent(name: str) -> Agent:
    """A LangGraph graph's agent (`agents.graphs.register_graph`), imported only by a thread
    that runs one: the `langgraph` extra is optional, and a worker without graphs has none."""
    with workflow.unsafe.sandbox_import_notification_policy(
        workflow.SandboxImportNotificationPolicy.SILENT
    ):
        from ag_ui_temporal.workflows.thread.agents.graph import GraphAgent
    return GraphAgent(name)


def _openai_agent(name: str) -> Agent:
    """An OpenAI Agents SDK agent (`agents.openai_agents.register_openai_agent`), imported only
    by a thread that runs one, as a graph's is (the `openai-agents` extra is optional)."""
    with workflow.unsafe.sandbox_import_notification_policy(
        workflow.SandboxImportNotificationPolicy.SILENT
    ):
        from ag_ui_temporal.workflows.thread.agents.openai_agent import OpenAIAgent
    return OpenAIAgent(name)


def _adk_agent(name: str) -> Agent:
    """A Google ADK agent (`agents.adk_agents.register_adk_agent`), imported only by a thread
    that runs one, as a graph's is (the `google-adk` extra is optional)."""
    with workflow.unsafe.sandbox_import_notification_policy(
        workflow.SandboxImportNotificationPolicy.SILENT
    ):
        from ag_ui_temporal.workflows.thread.agents.adk_agent import AdkAgent
    return AdkAgent(name)


__all__ = ["BUILT_IN", "Agent", "AgentFailed", "InboxAgent", "agent_for"]
