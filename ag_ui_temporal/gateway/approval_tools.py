"""An agent's approval tools for TanStack AI clients: their definitions as TypeScript
(`GET /agents/{agent}/tools.ts`, `ag-ui-temporal tools`), and what a client's own tools say
about whether its items will be typed.

A client's tool of the same name whose schema differs from the server's gets its approvals as
`generic` items, silently on the client's side: the gateway logs it once per agent and tool
per process, and marks each such interrupt of the run
(`metadata["ag-ui-temporal:clientToolMismatch"]`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Mapping, Sequence

from ag_ui.core import Tool

from ag_ui_temporal.agents.approval_tools import AgentApprovals, agent_approvals
from ag_ui_temporal.agents.catalog import catalog
from ag_ui_temporal.gateway.streaming import Batch, Offset
from ag_ui_temporal.gateway.tanstack.approval_schema import (
    ApprovalEnvelope,
    read_approval_response_schema,
)
from ag_ui_temporal.gateway.tanstack.client_tools import note_client_tools, schema_difference
from ag_ui_temporal.gateway.tanstack.tool_definitions import typescript_definitions
from ag_ui_temporal.settings import Settings

__all__ = ["client_tool_differences", "noting_client_tools", "served_agents", "typescript_module"]

log = logging.getLogger(__name__)

_WARNED: set[tuple[str, str]] = set()
"""(agent, tool) pairs logged already: at most one line each per process (the pairs are the
registered agents' tools, so the set stays small whatever clients send)."""
_BOUND: dict[str, tuple[AgentApprovals, dict[str, ApprovalEnvelope]]] = {}
"""By agent: its tools whose approvals are `tool-approval` bindings, with their envelopes,
and the approvals they were read from."""


def served_agents(settings: Settings) -> list[str]:
    """The agents a gateway of `settings` serves (what `GET /agents` lists): the `inbox` and
    what `AGENT_MODULES` register."""
    return list(catalog(settings))


def typescript_module(agent: str) -> str:
    """The TanStack AI definitions of `agent`'s approval tools (none for an agent that asks
    no approvals, such as `inbox`)."""
    approvals = agent_approvals(agent) or AgentApprovals(agent, (), ())
    return typescript_definitions(agent, approvals.tools, approvals.client_tools)


def client_tool_differences(agent: str, tools: Sequence[Tool] | None) -> dict[str, str]:
    """Tool name -> how the schema the client sent for one of `agent`'s approval tools
    differs from what the server's definition sends (`RunAgentInput.tools`)."""
    if not tools:
        return {}
    bound = _bound_tools(agent)
    differences: dict[str, str] = {}
    for sent in tools:
        name = sent.name
        if name not in bound or name in differences:
            continue
        difference = schema_difference(bound[name], sent.parameters)
        if difference is None:
            continue
        differences[name] = difference
        if (agent, name) not in _WARNED:
            _WARNED.add((agent, name))
            log.warning(
                "agent %s: the client's tool %s is not the server's (%s): TanStack AI shows "
                "its approvals as generic items (GET /agents/%s/tools.ts writes the one that "
                "matches)",
                agent,
                name,
                difference,
                agent,
            )
    return differences


def _bound_tools(agent: str) -> dict[str, ApprovalEnvelope]:
    """`_BOUND[agent]`'s tools, read once per registration: this runs for every run that sends
    tools."""
    approvals = agent_approvals(agent)
    if approvals is None:
        return {}
    cached = _BOUND.get(agent)
    if cached is None or cached[0] is not approvals:
        envelopes = {
            tool.name: envelope
            for tool in approvals.tools
            # a sub-agent's questions are generic items whatever the client registers
            if tool.asked_by == agent
            and (envelope := read_approval_response_schema(tool.response_schema)) is not None
        }
        cached = _BOUND[agent] = (approvals, envelopes)
    return cached[1]


async def noting_client_tools(
    events: AsyncGenerator[Batch, None], differences: Mapping[str, str]
) -> AsyncGenerator[Batch, None]:
    """`events` with the interrupts of the tools in `differences` marked (see module doc)."""
    try:
        async for batch in events:
            yield [Offset(note_client_tools(i.event, differences), i.offset) for i in batch]
    finally:
        await events.aclose()
