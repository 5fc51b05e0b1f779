"""Agents that offer standing decisions (`AGENT_MODULES` of tests/agents/test_standing.py), one
of each framework: a pydantic-ai agent whose `wire` tool needs approval (a scripted model: "wire
100 to bob" calls it once, "wire 100 to bob and 5 to eve" twice in one batch), and the
LangGraph, OpenAI Agents SDK and Google ADK examples, which send email through the demo's
`sendEmail`, registered again under names of their own, offering standing decisions of up to
an hour."""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

from agents import RunConfig
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from ag_ui_temporal import ThreadDeps, register, registered, thread_capabilities
from ag_ui_temporal.agents.adk_agents import register_adk_agent
from ag_ui_temporal.agents.graphs import register_graph
from ag_ui_temporal.agents.openai_agents import register_openai_agent
from ag_ui_temporal.examples.agents.adk_email import AGENT as ADK_AGENT
from ag_ui_temporal.examples.agents.email_graph import build_graph, send_email
from ag_ui_temporal.examples.agents.openai_email import AGENT
from ag_ui_temporal.examples.agents.openai_email_model import EmailModels

HOUR = timedelta(hours=1)
PYDANTIC = "standing-wire"
GRAPH = "standing-graph"
OPENAI = "standing-openai"
ADK = "standing-adk"
WIRES: Counter[tuple[str, int]] = Counter()
"""Executions of `wire`, by recipient and amount (the tool runs in the test's worker)."""
WIRE = re.compile(r"(\d+) to (\w+)")


async def _respond(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    last = messages[-1]
    returns = [part for part in last.parts if isinstance(part, ToolReturnPart)]
    if isinstance(last, ModelRequest) and returns:  # the calls ran (or were refused)
        yield "; ".join(str(part.content) for part in returns)
        return
    prompt = " ".join(str(getattr(part, "content", "")) for part in last.parts)
    for index, (amount, to) in enumerate(WIRE.findall(prompt)):
        args = json.dumps({"amount": int(amount), "to": to})
        call = f"call_{uuid.uuid4().hex}"
        yield {index: DeltaToolCall(name="wire", json_args=args, tool_call_id=call)}


def build_wire_agent() -> Agent[ThreadDeps, str]:
    agent = Agent(
        FunctionModel(stream_function=_respond),
        name=PYDANTIC,
        deps_type=ThreadDeps,
        capabilities=thread_capabilities(),
    )

    @agent.tool(requires_approval=True)
    async def wire(ctx: RunContext[ThreadDeps], amount: int, to: str) -> dict[str, Any]:
        WIRES[to, amount] += 1
        return {"sent": amount, "to": to}

    return agent


if registered(PYDANTIC) is None:
    register(build_wire_agent(), standing_approvals=HOUR)
register_graph(build_graph(), name=GRAPH, approval_tools=[send_email], standing_approvals=HOUR)
register_openai_agent(
    AGENT.clone(model="email-standing"),
    name=OPENAI,
    run_config=RunConfig(tracing_disabled=True),
    model_provider=EmailModels(),
    standing_approvals=HOUR,
)
register_adk_agent(ADK_AGENT.clone(), name=ADK, standing_approvals=HOUR)
