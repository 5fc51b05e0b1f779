"""An agent whose tools come from an MCP server, served in threads at `POST /agents/booking`.

List this module in `AGENT_MODULES` for the worker and the gateway, e.g.
`AGENT_MODULES='["ag_ui_temporal.examples.agents.booking"]' make run`.
Its one toolset is the MCP server `booking_mcp.py`
beside it (the official `mcp` SDK) over stdio; its `book_table`
asks the user for a date, a party size and a name (`elicitation/create`), each question an
`input_required` interrupt of the thread (docs/agents.md, "MCP servers and elicitation").

The model is `LLM_MODEL`'s; unset, a small offline model that books a table when asked
"book a table at <restaurant>", so it runs with no key and no network.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from ag_ui_temporal.agents import ThreadDeps, mcp_server, register, thread_capabilities
from ag_ui_temporal.agents.models import resolve_model
from ag_ui_temporal.settings import Settings, get_settings

SERVER = Path(__file__).with_name("booking_mcp.py")
ASK = "book a table at "
INSTRUCTIONS = "You book restaurant tables with the booking tools. Say plainly what happened."


async def _offline(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    last = messages[-1]
    parts = last.parts if isinstance(last, ModelRequest) else []
    if said := [str(p.content) for p in parts if isinstance(p, ToolReturnPart)]:
        yield " ".join(said)
        return
    prompt = " ".join(str(p.content) for p in parts if isinstance(p, UserPromptPart))
    if ASK not in prompt.lower():
        yield f"Ask me to {ASK}<restaurant>."
        return
    restaurant = prompt[prompt.lower().index(ASK) + len(ASK) :].strip(" .")
    args = json.dumps({"restaurant": restaurant})
    call_id = f"call_{uuid.uuid4().hex}"  # the model runs in an activity: no replay
    yield {0: DeltaToolCall(name="book_table", json_args=args, tool_call_id=call_id)}


def booking_model(settings: Settings) -> Model:
    """`LLM_MODEL`'s model, or the offline one when it is unset."""
    if settings.llm_model:
        return resolve_model(settings)
    return FunctionModel(stream_function=_offline, model_name="booking-offline")


booking = Agent(
    booking_model(get_settings()),
    name="booking",
    deps_type=ThreadDeps,
    instructions=INSTRUCTIONS,
    capabilities=thread_capabilities(),
    # a script is a stdio server: each tool call runs in a process of its own (the tool
    # list comes from one the worker keeps); a streamable HTTP server is its URL
    toolsets=[mcp_server(SERVER, id="booking")],
)

register(booking, description="Booking: tables at restaurants (an MCP server asks the details).")
