"""Agents that can run in a thread, by name."""

from workflows.agents.assistant import AssistantAgent
from workflows.agents.base import Agent

AGENTS: dict[str, type[Agent]] = {"assistant": AssistantAgent}

__all__ = ["AGENTS", "Agent", "AssistantAgent"]
