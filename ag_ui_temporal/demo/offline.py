"""The offline demo model: a deterministic `FunctionModel` that reads the demo's sentences.

`LLM_MODEL` unset, the assistant runs on this: no key, no network, the demo's sentences
read the same way every time. It runs in the model activity like any real model, so it
streams too (word by word) and may use uuids for its call ids.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any
from uuid import uuid4

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextContent,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from ag_ui_temporal.demo.orders import order_to_cancel
from ag_ui_temporal.demo.sentences import (
    HELP,
    ToolCall,
    TooManyCalls,
    expense_args,
    report_or_email_calls,
)
from ag_ui_temporal.workflows.contract import MAX_INTERRUPTS_PER_RUN

PICK_DATE = "pickDate"
"""The demo's frontend tool: offered by the browser, called when a message mentions a date."""
PICK_DATE_QUESTION = "Which date works for you?"
DELETE_DRAFTS = "deleteDrafts"
"""The demo's risky step: a person confirms it (a `confirmation` interrupt)."""
ORDER_DESK = "orderDesk"
"""The demo's delegation: order requests go to the sub-agent `orders`."""

Reply = str | list[ToolCall]
"""One response of the model: a text, or tool calls (with no text beside them)."""


def offline_model(
    word_delay: float = 0.0, max_calls: int = MAX_INTERRUPTS_PER_RUN
) -> FunctionModel:
    """`word_delay` seconds between streamed words: a reader sees the text grow (`make run`);
    tests run it at 0. A sentence asking for more than `max_calls` tool calls is answered
    with a sentence saying so, before any call is made (the default of the threads' own
    `max_interrupts_per_run`, past which a thread refuses any model's response: a demo
    model need not know a thread's configured limit)."""

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        reply = reply_to(messages, info, max_calls)
        if isinstance(reply, str):
            return ModelResponse(parts=[TextPart(reply)])
        return ModelResponse(
            parts=[ToolCallPart(name, args, tool_call_id=_call_id()) for name, args in reply]
        )

    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        async for piece in _stream(reply_to(messages, info, max_calls)):
            yield piece
            if word_delay and isinstance(piece, str):
                await asyncio.sleep(word_delay)

    return FunctionModel(respond, stream_function=stream, model_name="offline")


async def _stream(reply: Reply) -> AsyncIterator[str | DeltaToolCalls]:
    if isinstance(reply, str):
        for word in _words(reply):  # several deltas, as a client would see from a real model
            yield word
        return
    for index, (name, args) in enumerate(reply):
        yield {index: DeltaToolCall(name, json.dumps(args), tool_call_id=_call_id())}


def reply_to(
    messages: Sequence[ModelMessage], info: AgentInfo, max_calls: int = MAX_INTERRUPTS_PER_RUN
) -> Reply:
    """What the model says next: a summary of tool results, else what the user asked for
    (a new message comes first: results beside it close out calls that never ran)."""
    last = messages[-1] if messages else None
    parts = last.parts if isinstance(last, ModelRequest) else []
    returns = [p for p in parts if isinstance(p, ToolReturnPart)]
    if returns and not any(isinstance(p, UserPromptPart) for p in parts):
        return _summary(returns, _previous_calls(messages))
    offered = {tool.name for tool in info.function_tools}
    try:
        return _answer(_last_user_text(messages), offered, max_calls)
    except TooManyCalls as too_many:
        return (
            f"I can send at most {too_many.limit} emails at a time, and that message names "
            "more addresses. Please ask again with fewer."
        )


def _answer(text: str, offered: set[str], max_calls: int) -> Reply:
    expense = expense_args(text)
    calls = (
        [("submitExpense", expense)]
        if expense is not None
        else report_or_email_calls(text, max_calls)
    )
    if calls and all(name in offered for name, _ in calls):
        return calls
    if order_to_cancel(text) is not None and ORDER_DESK in offered:
        return [(ORDER_DESK, {"request": text})]
    if "drafts" in text.lower() and DELETE_DRAFTS in offered:
        return [(DELETE_DRAFTS, {})]
    if "date" in text.lower() and PICK_DATE in offered:
        return [(PICK_DATE, {"question": PICK_DATE_QUESTION})]
    return HELP


def _summary(returns: list[ToolReturnPart], calls: list[ToolCallPart]) -> str:
    """One sentence per tool result, in the order the previous response made the calls."""
    order = {call.tool_call_id: index for index, call in enumerate(calls)}
    args = {call.tool_call_id: call.args_as_dict() for call in calls}
    ranked = sorted(returns, key=lambda part: order.get(part.tool_call_id, len(order)))
    return " ".join(_sentence(part, args.get(part.tool_call_id, {})) for part in ranked)


def _sentence(part: ToolReturnPart, args: dict[str, Any]) -> str:
    if part.tool_name == ORDER_DESK and part.outcome == "success":
        return f"The order desk says: {part.content}"
    result = _as_dict(part.content) if part.outcome == "success" else None
    if part.tool_name == PICK_DATE:
        date = (result or {}).get("date")
        return f"You picked {date}." if date is not None else "You did not pick a date."
    what = _what(part.tool_name, args)
    if part.outcome == "denied":
        return f"I did not carry out {what}: {str(part.content).rstrip('.')}."
    if result is None:  # failed for good (or the call had to be retried): the run ends here
        why = part.model_response_str(wrap_if_error=False)
        return f"I could not carry out {what} ({why}). You can ask me again."
    return _result_sentence(part.tool_name, what, result)


def _result_sentence(tool: str, what: str, result: dict[str, Any]) -> str:
    error = result.get("error")
    if isinstance(error, dict):
        return (
            f"I could not carry out {what} ({error.get('type')}: {error.get('message')}). "
            "You can ask me again."
        )
    if result.get("deleted"):
        return "Deleted your drafts."
    if result.get("sent"):
        return f"Sent the email to {result.get('to')} ({result.get('subject')!r})."
    if result.get("filed"):
        return (
            f"Filed the {result.get('quarter')} {result.get('year')} quarterly report "
            f"(revenue {result.get('revenue')})."
        )
    if result.get("submitted"):
        return (
            f"Submitted the expense ({_amount(result.get('amount'))} {result.get('currency')} for "
            f"{result.get('description')}) for approval as {result.get('chainId')}. "
            "I will tell you here when it is decided."
        )
    return f"{tool} returned {json.dumps(result, sort_keys=True)}."


def _what(tool: str, args: dict[str, Any]) -> str:
    """A tool call as the assistant names it to the user."""
    return {
        "fileQuarterlyReport": "the quarterly report",
        DELETE_DRAFTS: "deleting your drafts",
        ORDER_DESK: "your order request",
        "submitExpense": f"the expense ({_amount(args.get('amount'))} {args.get('currency')})",
    }.get(tool, f"the email to {args.get('to')}")


def _amount(amount: Any) -> Any:
    """1200.0 reads 1200, as the sentence asked (a float-typed tool returns 1200.0)."""
    return int(amount) if isinstance(amount, float) and amount.is_integer() else amount


def _previous_calls(messages: Sequence[ModelMessage]) -> list[ToolCallPart]:
    for message in reversed(messages):
        if isinstance(message, ModelResponse):
            return [part for part in message.parts if isinstance(part, ToolCallPart)]
    return []


def _last_user_text(messages: Sequence[ModelMessage]) -> str:
    """The newest user prompt's text (its text parts joined by spaces, as `message_text` does)."""
    for message in reversed(messages):
        if not isinstance(message, ModelRequest):
            continue
        prompts = [part for part in message.parts if isinstance(part, UserPromptPart)]
        if prompts:
            return _prompt_text(prompts[-1])
    return ""


def _prompt_text(part: UserPromptPart) -> str:
    if isinstance(part.content, str):
        return part.content
    texts = [
        c if isinstance(c, str) else c.content
        for c in part.content
        if isinstance(c, str | TextContent)
    ]
    return " ".join(texts)


def _as_dict(content: Any) -> dict[str, Any] | None:
    """A tool's result as a JSON object (frontend tools answer with a JSON string)."""
    if isinstance(content, str):
        try:
            content = json.loads(content)
        except ValueError:
            return None
    return content if isinstance(content, dict) else None


def _words(text: str) -> list[str]:
    """The text cut before each word that follows whitespace: the pieces join back to it."""
    return re.split(r"(?<=\s)(?=\S)", text) or [text]


def _call_id() -> str:
    return f"call_{uuid4().hex}"
