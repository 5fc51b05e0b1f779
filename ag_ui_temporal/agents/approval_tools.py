"""The tools a served agent asks a person to approve, and the schema each approval announces.

What `GET /agents/{agent}/tools.ts` and `ag-ui-temporal tools` write TanStack AI definitions
of, and what the gateway compares a client's own tools with. Read from the registration, not
from a run, with the rules the thread asks by (`workflows.thread.agents`):

- a pydantic-ai agent's function tool declared with `requires_approval=True` or with
  `ask_person(...)` metadata, unless it asks for a confirmation (`confirm=True`) or for the
  arguments themselves (`fills_args=True`); its approvals take edits as `register`'s
  `approve_with_edits` says, and a rejection carries `ask_person(reject_payload=...)`;
- the same tools of the sub-agents its `delegate` tools hand over to, asked under its own
  promise on edits (about the delegating call: TanStack shows them as generic items);
- a LangGraph graph's `register_graph(approval_tools=...)`;
- an OpenAI Agents SDK agent's function tools with `needs_approval` (True or a callable: it may
  ask), and those of the agents it hands off to; never with edits, a rejection carrying
  `register_openai_agent(reject_payload=...)`.

A tool that raises `ApprovalRequired()` without `ask_person` metadata is not known to ask (give
it `metadata=ask_person()`), nor is what a tool's `prepare`, an MCP server's tools or a call's
own `ApprovalRequired(metadata=...)` change in a run. Client tools (`RunAgentInput.tools`) that
`register(approve_client_tools=...)` names are the client's own: only their names are known.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pydantic_ai import Agent, Tool
from pydantic_ai.toolsets import FunctionToolset

from ag_ui_temporal.agents.delegation import delegated_to
from ag_ui_temporal.agents.registry import (
    Registered,
    RegisteredAdkAgent,
    RegisteredOpenAIAgent,
    Served,
    served,
)
from ag_ui_temporal.agents.thread import ASK_KEY
from ag_ui_temporal.workflows.contract import tool_approval_schema
from ag_ui_temporal.workflows.contract.tools import JsonSchema

__all__ = ["AgentApprovals", "ApprovalTool", "agent_approvals"]


@dataclass(frozen=True)
class ApprovalTool:
    name: str
    description: str
    parameters: JsonSchema
    """The JSON Schema of its arguments, as the model is offered it."""
    response_schema: JsonSchema
    """The `responseSchema` of its `tool_call` interrupts (`contract.tool_approval_schema`)."""
    asked_by: str
    """The agent whose tool it is: the served agent, or a sub-agent it delegates to."""


@dataclass(frozen=True)
class AgentApprovals:
    agent: str
    tools: tuple[ApprovalTool, ...]
    """Its tools that ask for approval, each name once (the first found: a client registers
    one tool by a name)."""
    client_tools: tuple[str, ...]
    """The client tools a person approves before the client runs them (the client defines
    them: their schemas are the client's)."""


def agent_approvals(name: str) -> AgentApprovals | None:
    """What the agent `name` asks approval for; None when no agent or graph has that name.
    Worked out once per registration (the gateway asks on every run that sends tools)."""
    entry = served(name)
    if entry is None:
        return None
    cached = _FOUND.get(name)
    if cached is None or cached[0] is not entry:
        cached = _FOUND[name] = (entry, _approvals(name, entry))
    return cached[1]


_FOUND: dict[str, tuple[Served, AgentApprovals]] = {}
"""By agent name, with the registration it was read from (a name registered again with
`replace=True` is read again)."""


def _approvals(name: str, entry: Served) -> AgentApprovals:
    if isinstance(entry, Registered):
        tools = _unique(_asking_tools(entry.agent, edits=entry.approve_with_edits, seen=set()))
        return AgentApprovals(name, tools, tuple(sorted(entry.approve_client_tools)))
    if isinstance(entry, RegisteredOpenAIAgent):
        reject = entry.options.reject_payload
        tools = _unique(_openai_tools(name, entry.agent, reject, set()))
        return AgentApprovals(name, tools, ())
    if isinstance(entry, RegisteredAdkAgent):
        reject = entry.options.reject_payload
        return AgentApprovals(name, _unique(_adk_tools(name, entry.agent, reject)), ())
    edits = entry.approve_with_edits
    graph_tools = (
        ApprovalTool(
            tool.name,
            tool.description,
            tool.parameters,
            tool_approval_schema(tool.parameters if edits else None, None),
            name,
        )
        for tool in entry.approval_tools
    )
    return AgentApprovals(name, _unique(graph_tools), ())


def _asking_tools(agent: Agent[Any, Any], *, edits: bool, seen: set[int]) -> Iterator[ApprovalTool]:
    if id(agent) in seen:  # two delegations to one agent, or a cycle
        return
    seen.add(id(agent))
    for tool in _function_tools(agent):
        if (inner := delegated_to(tool)) is not None:
            yield from _asking_tools(inner, edits=edits, seen=seen)
            continue
        metadata = tool.metadata or {}
        ask = metadata.get(ASK_KEY) or {}
        asks = tool.requires_approval or ASK_KEY in metadata
        if not asks or ask.get("confirm") or ask.get("fillsArgs"):
            continue
        reject = ask.get("rejectPayload")
        parameters = tool.tool_def.parameters_json_schema
        yield ApprovalTool(
            tool.name,
            tool.description or "",
            parameters,
            tool_approval_schema(
                parameters if edits else None, reject if isinstance(reject, dict) else None
            ),
            agent.name or "",
        )


def _openai_tools(
    served: str, agent: Any, reject: JsonSchema | None, seen: set[int]
) -> Iterator[ApprovalTool]:
    """An `agents.Agent`'s function tools that may ask (`needs_approval`), and those of the
    agents it hands off to: a handoff's agent takes the conversation over, its calls are the
    ones the client sees, asked about as the served agent's."""
    if id(agent) in seen:
        return
    seen.add(id(agent))
    for tool in agent.tools:
        if getattr(tool, "needs_approval", False) and hasattr(tool, "params_json_schema"):
            yield ApprovalTool(
                tool.name,
                tool.description or "",
                tool.params_json_schema,
                tool_approval_schema(None, reject),
                served,
            )
    for handoff in agent.handoffs:
        if hasattr(handoff, "tools"):  # an agent (a `Handoff` object names its agent only)
            yield from _openai_tools(served, handoff, reject, seen)


def _adk_tools(served: str, agent: Any, reject: JsonSchema | None) -> Iterator[ApprovalTool]:
    """An ADK agent's tools that may ask (`require_confirmation`), and those of its sub-agents
    (whose calls the client sees as the served agent's)."""
    for tool in getattr(agent, "tools", ()):
        if not getattr(tool, "_require_confirmation", False):
            continue
        yield ApprovalTool(
            tool.name,
            tool.description or "",
            _adk_parameters(tool),
            tool_approval_schema(None, reject),
            served,
        )
    for sub in agent.sub_agents:
        yield from _adk_tools(served, sub, reject)


def _adk_parameters(tool: Any) -> JsonSchema:
    """A tool's arguments, as the JSON Schema ADK declares to the model (a tool that declares
    them in google-genai's own `Schema` type: that schema's JSON Schema)."""
    declaration = tool._get_declaration()
    if declaration is None:
        return {"type": "object"}
    if declaration.parameters_json_schema:
        schema: JsonSchema = declaration.parameters_json_schema
        return schema
    if declaration.parameters is not None:
        typed: JsonSchema = declaration.parameters.json_schema.model_dump(
            exclude_none=True, mode="json"
        )
        return typed
    return {"type": "object"}


def _function_tools(agent: Agent[Any, Any]) -> list[Tool[Any]]:
    """The agent's function tools, in the order they were added."""
    tools: list[Tool[Any]] = []
    for toolset in agent.toolsets:
        toolset.apply(
            lambda leaf: (
                tools.extend(leaf.tools.values()) if isinstance(leaf, FunctionToolset) else None
            )
        )
    return tools


def _unique(tools: Iterator[ApprovalTool]) -> tuple[ApprovalTool, ...]:
    found: dict[str, ApprovalTool] = {}
    for tool in tools:
        found.setdefault(tool.name, tool)
    return tuple(found.values())
