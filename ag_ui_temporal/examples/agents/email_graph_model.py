"""The email graph's offline chat model: a LangChain `BaseChatModel` that reads its own sentences.

The example graph (`examples.agents.email_graph`) runs on it, so it works (and is tested)
with no key and no network, answering as a model would: a `sendEmail` tool call for "Send an
email to ada@example.com saying hi", then a sentence about the tool's result. It streams
(word by word, `word_delay` apart), so its tokens reach the client as a real model's do; any
chat model that supports `bind_tools` takes its place.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

from ag_ui_temporal.examples.agents.email_script import HELP, email_asked


def reply_to(messages: Sequence[BaseMessage]) -> AIMessage:
    """The model's next message: a sentence about the last tool result, else a tool call for
    the last user message, else what it can do."""
    last = messages[-1] if messages else None
    if isinstance(last, ToolMessage):
        return AIMessage(content=_said(last))
    if isinstance(last, HumanMessage) and (args := email_asked(str(last.text))) is not None:
        call = {"name": "sendEmail", "args": args, "id": f"call_{uuid.uuid4().hex[:24]}"}
        return AIMessage(content="", tool_calls=[call])
    return AIMessage(content=HELP)


def _said(result: ToolMessage) -> str:
    text = str(result.text)
    if result.status == "error":
        return f"I did not send the email: {text}."
    try:
        sent = json.loads(text)
    except ValueError:
        return text
    if not isinstance(sent, dict) or not sent.get("sent"):
        return text
    return f"Sent the email to {sent['to']}."


class EmailChatModel(BaseChatModel):
    """Scripted: replies with `reply_to`, streaming its text word by word."""

    word_delay: float = 0.0

    @property
    def _llm_type(self) -> str:
        return "email-offline"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> EmailChatModel:
        return self  # it knows its one tool

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=reply_to(messages))])

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        reply = reply_to(messages)
        for word in re.split(r"(?<=\s)(?=\S)", str(reply.text)) if reply.text else []:
            yield ChatGenerationChunk(message=AIMessageChunk(content=word))
            await asyncio.sleep(self.word_delay)
        for index, call in enumerate(reply.tool_calls):
            piece = tool_call_chunk(
                name=call["name"], args=json.dumps(call["args"]), id=call["id"], index=index
            )
            yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[piece]))
