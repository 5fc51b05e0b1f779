"""The support agent's offline model: a `FunctionModel` that reads its own sentences.

With `LLM_MODEL` unset the support agent runs on this, so the example works (and is
tested) with no key and no network. It answers the way a model would: tool calls for
"Refund 80 EUR on order A-17" and "What is the status of order A-17?", then a sentence
per tool result; its text streams word by word like a real model's.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

HELP = (
    'I can refund an order ("Refund 80 EUR on order A-17") or ask the warehouse about '
    'one ("What is the status of order A-17?").'
)
ORDER = re.compile(r"\border\s+#?([A-Za-z0-9][A-Za-z0-9-]{0,31})", re.IGNORECASE)
AMOUNT = re.compile(r"\brefund\s+(\d{1,7}(?:\.\d{1,2})?)", re.IGNORECASE)

Call = tuple[str, dict[str, Any]]


def support_offline_model() -> FunctionModel:
    return FunctionModel(_respond, stream_function=_stream, model_name="support-offline")


async def _respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    reply = reply_to(messages)
    if isinstance(reply, str):
        return ModelResponse(parts=[TextPart(reply)])
    name, args = reply
    return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=_call_id())])


async def _stream(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    reply = reply_to(messages)
    if isinstance(reply, str):
        for word in re.split(r"(?<=\s)(?=\S)", reply):
            yield word
        return
    name, args = reply
    yield {0: DeltaToolCall(name, json.dumps(args), tool_call_id=_call_id())}


def reply_to(messages: Sequence[ModelMessage]) -> str | Call:
    """A sentence per tool result if tools just ran, else what the user asked for."""
    last = messages[-1] if messages else None
    if isinstance(last, ModelRequest):
        returns = [part for part in last.parts if isinstance(part, ToolReturnPart)]
        if returns:
            return " ".join(_sentence(part) for part in returns)
        prompts = [part for part in last.parts if isinstance(part, UserPromptPart)]
        if prompts and isinstance(prompts[-1].content, str):
            return _answer(prompts[-1].content)
    return HELP


def _answer(text: str) -> str | Call:
    order = ORDER.search(text)
    if order is None:
        return HELP
    amount = AMOUNT.search(text)
    if amount is not None:
        return ("refund", {"order_id": order[1], "amount": _number(amount[1])})
    if "status" in text.lower() or "where" in text.lower():
        return ("order_status", {"order_id": order[1]})
    return HELP


def _number(text: str) -> int | float:
    """`80` as 80, not 80.0: the approval's message shows the amount as the model sent it."""
    value = float(text)
    return int(value) if value.is_integer() else value


def _sentence(part: ToolReturnPart) -> str:
    result = part.content if isinstance(part.content, dict) else None
    if part.outcome == "denied":
        return f"I did not make the refund: {part.content}."
    if result is None:  # a reason, not an answer: cancelled, expired, failed
        return f"I could not do it: {part.model_response_str()}."
    if part.tool_name == "refund":
        return (
            f"Refunded {result['amount']:g} EUR on order {result['order_id']} "
            f"({result['refund_id']})."
        )
    note = f" The warehouse says: {result['note']}" if result.get("note") else ""
    return f"Your order is {result.get('status')}.{note}"


def _call_id() -> str:
    return f"call_{uuid.uuid4().hex}"
