"""The thread's transcript as a pydantic-ai message history (pydantic-ai's own AG-UI
adapter reads it, so tool calls, tool results and their ids survive the round trip)."""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ag_ui.core import Message
    from pydantic import TypeAdapter
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.ui.ag_ui import AGUIAdapter

    from workflows.contract import WireDict

_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


def model_history(messages: list[WireDict]) -> list[ModelMessage]:
    """`messages` for the model. The window may begin anywhere (older messages are in the
    archive): it starts at its first user message, so no result precedes its call."""
    first = next((i for i, m in enumerate(messages) if m.get("role") == "user"), len(messages))
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
