"""Agents that can run in a thread, by name: the built-in ones, then the pydantic-ai
agents registered on the worker (`agents.register`)."""

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.agents import registered
    from ag_ui_temporal.workflows.contract import INBOX_AGENT

from ag_ui_temporal.workflows.thread.agents.base import Agent
from ag_ui_temporal.workflows.thread.agents.inbox import InboxAgent
from ag_ui_temporal.workflows.thread.agents.llm import AgentFailed, LlmAgent

BUILT_IN: dict[str, type[Agent]] = {INBOX_AGENT: InboxAgent}
"""The library's own agents; every other one is registered (`agents.register`)."""


def agent_for(name: str) -> Agent:
    """The thread's agent; a name nobody serves fails the workflow task (it retries until
    a worker that has the agent picks it up)."""
    if name in BUILT_IN:
        return BUILT_IN[name]()
    entry = registered(name)
    if entry is None:
        raise RuntimeError(f"no agent {name!r} on this worker")
    if entry.workflow_agent:
        return _imported(entry.workflow_agent)()
    return LlmAgent(name)


def _imported(path: str) -> type[Agent]:
    """The class `module:Class` names, imported into this workflow's sandbox.

    A deliberate import after the workflow loaded (the library does not import the modules
    that serve agents), so the sandbox is told not to warn; it is the same import on every
    replay. `__import__`, not `importlib`: the sandbox's import hook is the builtin one."""
    module, _, attr = path.partition(":")
    with workflow.unsafe.sandbox_import_notification_policy(
        workflow.SandboxImportNotificationPolicy.SILENT
    ):
        agent: type[Agent] = getattr(__import__(module, fromlist=[attr]), attr)
    return agent


__all__ = ["BUILT_IN", "Agent", "AgentFailed", "InboxAgent", "agent_for"]
