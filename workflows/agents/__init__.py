"""Agents that can run in a thread, by name."""

from workflows.agents.assistant import AssistantAgent
from workflows.agents.base import Agent
from workflows.agents.inbox import InboxAgent

AGENTS: dict[str, type[Agent]] = {"assistant": AssistantAgent, "inbox": InboxAgent}

__all__ = ["AGENTS", "Agent", "AssistantAgent", "InboxAgent"]
