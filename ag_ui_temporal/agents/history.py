"""The thread's transcript as a pydantic-ai message history (pydantic-ai's own AG-UI
adapter reads it, so tool calls, tool results and their ids survive the round trip).

Pure functions, in this package (shared with the workflow sandbox) because of the
`TypeAdapter` for AG-UI messages: built once per process, not once per workflow."""

from __future__ import annotations

from ag_ui.core import Message
from pydantic import TypeAdapter
from pydantic_ai.messages import ModelMessage
from pydantic_ai.ui.ag_ui import AGUIAdapter

from ag_ui_temporal.workflows.contract import THREAD_WINDOW_BYTES, WireDict, json_size

_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])

MODEL_HISTORY_BYTES = THREAD_WINDOW_BYTES
"""What the model reads of the transcript at most: the model activity's input stays well
under Temporal's payload limits, however much one run brings."""


def model_history(messages: list[WireDict]) -> list[ModelMessage]:
    """The newest `messages` within `MODEL_HISTORY_BYTES`, for the model. They start at a
    user message, so no result precedes its call (the window, or the budget, may cut
    anywhere)."""
    start = len(messages)
    size = 0
    while start > 0 and size + (next_size := json_size(messages[start - 1])) <= MODEL_HISTORY_BYTES:
        start -= 1
        size += next_size
    users = [i for i, message in enumerate(messages) if message.get("role") == "user"]
    first = next((i for i in users if i >= start), users[-1] if users else len(messages))
    return AGUIAdapter.load_messages(_MESSAGES.validate_python(messages[first:]))


def through_calls(messages: list[WireDict], call_ids: set[str]) -> list[WireDict]:
    """The transcript up to the message that made these tool calls, and the results that
    followed it: what a resume continues from, whatever was posted since."""
    made = max(
        (
            i
            for i, m in enumerate(messages)
            if any(call.get("id") in call_ids for call in m.get("toolCalls") or [])
        ),
        default=len(messages) - 1,
    )
    end = made + 1
    while end < len(messages) and messages[end].get("role") == "tool":
        end += 1
    return messages[:end]
