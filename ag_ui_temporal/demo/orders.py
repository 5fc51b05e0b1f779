"""The demo's sub-agent `orders`: the assistant hands order questions to it (`orderDesk`).

It has one tool, `cancelOrder`, which a person approves; the thread asks that person on
the sub-agent's behalf (the interrupt's `subagentRunId` is the sub-agent's run, and the
web UI says "asked by orders"). The tool runs in the sub-agent's own tool activity, once
per call id. Offline, its model reads "cancel order <id>" (`orders_offline_model`).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from typing import Any

from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from ag_ui_temporal.agents.thread import ThreadDeps, ask_person, thread_capabilities

NAME = "orders"
CANCEL_ORDER = "cancelOrder"
CANCEL = re.compile(r"\bcancel\s+order\s+#?([\w-]{1,40})", flags=re.IGNORECASE)
"""The sentence the assistant hands over: "Cancel order 42"."""
HELP = 'I can cancel an order ("Cancel order 42").'
CANCELLED: dict[str, str] = {}
"""Stands in for the shop's order system: cancelled order ids by tool call id."""


def order_to_cancel(text: str) -> str | None:
    """The order id a sentence asks to cancel, if it asks that."""
    match = CANCEL.search(text)
    return match.group(1) if match else None


async def cancel_order(ctx: RunContext[ThreadDeps], order_id: str) -> dict[str, Any]:
    """Cancel the order `order_id` (a person approves first)."""
    CANCELLED.setdefault(ctx.tool_call_id or "", order_id)  # a retried activity: once per call
    return {"cancelled": True, "orderId": order_id}


def build_orders(model: Model) -> Agent[ThreadDeps, str]:
    tool: Tool[ThreadDeps] = Tool(
        cancel_order,
        name=CANCEL_ORDER,
        takes_ctx=True,
        requires_approval=True,
        metadata=ask_person("Cancel order {order_id}?", what="cancelling order {order_id}"),
    )
    return Agent(
        model,
        name=NAME,
        deps_type=ThreadDeps,
        instructions="You handle the shop's orders. Cancel an order only when asked to.",
        tools=[tool],
        capabilities=thread_capabilities(),
    )


def orders_offline_model() -> FunctionModel:
    return FunctionModel(_respond, stream_function=_stream, model_name="orders-offline")


async def _stream(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    """What `_respond` answers, in one piece (the thread requests streamed responses)."""
    for part in (await _respond(messages, info)).parts:
        if isinstance(part, TextPart):
            yield part.content
        elif isinstance(part, ToolCallPart):
            yield {
                0: DeltaToolCall(
                    part.tool_name, part.args_as_json_str(), tool_call_id=part.tool_call_id
                )
            }


async def _respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last = messages[-1] if messages else None
    parts = last.parts if isinstance(last, ModelRequest) else []
    returns = [p for p in parts if isinstance(p, ToolReturnPart)]
    if returns:
        return ModelResponse(parts=[TextPart(" ".join(_said(p) for p in returns))])
    order_id = order_to_cancel(_prompt(messages))
    if order_id is None:
        return ModelResponse(parts=[TextPart(HELP)])
    return ModelResponse(parts=[ToolCallPart(CANCEL_ORDER, {"order_id": order_id})])


def _said(part: ToolReturnPart) -> str:
    if part.outcome == "denied":
        return f"I did not cancel the order: {str(part.content).rstrip('.')}."
    content = part.content if isinstance(part.content, dict) else {}
    return f"Cancelled order {content.get('orderId')}."


def _prompt(messages: Sequence[ModelMessage]) -> str:
    for message in reversed(messages):
        for part in getattr(message, "parts", []):
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                return part.content
    return ""
