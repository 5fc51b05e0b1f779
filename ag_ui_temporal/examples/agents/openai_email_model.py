"""The OpenAI Agents SDK example's offline model: an `agents.Model` that reads its own sentences.

The example agent (`examples.agents.openai_email`) runs on it, so it works (and is tested)
with no key and no network, answering as a model would: a `sendEmail` call for "Send an email
to ada@example.com saying hi", then a sentence about the call's result. It streams, word by
word (`word_delay` apart), the Responses API's events as OpenAI's models stream them, so its
tokens reach the client as a real model's do; `OpenAIProvider` takes its place for real.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

from agents import Model, ModelProvider, ModelResponse, Usage
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionToolCall,
    ResponseOutputItemAddedEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseStreamEvent,
    ResponseTextDeltaEvent,
)

from ag_ui_temporal.examples.agents.email_script import HELP, email_asked, said, words

NAME = "email-offline"


def reply_to(items: str | list[Any]) -> ResponseFunctionToolCall | ResponseOutputMessage:
    """The model's next output: a sentence about the last call's result, else a `sendEmail`
    call for the last user message, else what it can do."""
    last = items[-1] if isinstance(items, list) and items else {"role": "user", "content": items}
    last = last if isinstance(last, dict) else last.model_dump()
    if last.get("type") == "function_call_output":
        return _message(said(str(last.get("output"))))
    text = last.get("content") if last.get("role") == "user" else None
    if isinstance(text, str) and (args := email_asked(text)) is not None:
        return ResponseFunctionToolCall(
            type="function_call",
            id=f"fc_{uuid.uuid4().hex[:24]}",
            call_id=f"call_{uuid.uuid4().hex[:24]}",
            name="sendEmail",
            arguments=json.dumps(args, separators=(",", ":")),  # compact, as OpenAI's models
            status="completed",
        )
    return _message(HELP)


def _message(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        type="message",
        id=f"msg_{uuid.uuid4().hex[:24]}",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )


class EmailModel(Model):
    """Scripted: answers with `reply_to`, streaming it word by word."""

    def __init__(self, word_delay: float = 0.0) -> None:
        self.word_delay = word_delay

    async def get_response(
        self, system_instructions: str | None, input: str | list[Any], *args: Any, **kwargs: Any
    ) -> ModelResponse:
        return ModelResponse(output=[reply_to(input)], usage=Usage(requests=1), response_id=None)

    async def stream_response(  # an async generator, as the SDK's models are
        self, system_instructions: str | None, input: str | list[Any], *args: Any, **kwargs: Any
    ) -> AsyncIterator[ResponseStreamEvent]:
        item = reply_to(input)
        count = iter(range(1_000_000))
        if isinstance(item, ResponseFunctionToolCall):
            added = item.model_copy(update={"arguments": ""})
            yield ResponseOutputItemAddedEvent(
                type="response.output_item.added",
                item=added,
                output_index=0,
                sequence_number=next(count),
            )
            for chunk in words(item.arguments):
                await asyncio.sleep(self.word_delay)
                yield ResponseFunctionCallArgumentsDeltaEvent(
                    type="response.function_call_arguments.delta",
                    delta=chunk,
                    item_id=item.id or "",
                    output_index=0,
                    sequence_number=next(count),
                )
        else:
            text = "".join(getattr(content, "text", "") for content in item.content)
            for chunk in words(text):
                await asyncio.sleep(self.word_delay)
                yield ResponseTextDeltaEvent(
                    type="response.output_text.delta",
                    delta=chunk,
                    item_id=item.id,
                    output_index=0,
                    content_index=0,
                    logprobs=[],
                    sequence_number=next(count),
                )
        response = Response(
            id=f"resp_{uuid.uuid4().hex[:24]}",
            created_at=0,
            model=NAME,
            object="response",
            output=[item],
            parallel_tool_calls=False,
            tool_choice="auto",
            tools=[],
        )
        yield ResponseCompletedEvent(
            type="response.completed", response=response, sequence_number=next(count)
        )


class EmailModels(ModelProvider):
    """The provider of the example's model name (`NAME`)."""

    def __init__(self, word_delay: float = 0.0) -> None:
        self.word_delay = word_delay

    def get_model(self, model_name: str | None) -> Model:
        return EmailModel(self.word_delay)
