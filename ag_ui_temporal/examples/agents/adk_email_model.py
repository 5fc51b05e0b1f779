"""The Google ADK example's offline model: an ADK `BaseLlm` that reads its own sentences.

The example agent (`examples.agents.adk_email`) runs on it, so it works (and is tested) with no
key and no network, answering as a model would (`email_script`): a `sendEmail` call for "Send
an email to ada@example.com saying hi", then a sentence about the call's result. Streamed,
its text comes word by word (`WORD_DELAY` apart) as partial responses, then the whole one, as
ADK's Gemini model streams. Registered in ADK's `LLMRegistry` under `NAME`: the model activity
makes it by that name on the worker, as it makes `gemini-2.5-flash` for a real agent.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator
from typing import ClassVar

from google.adk.models import BaseLlm, LLMRegistry
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from ag_ui_temporal.examples.agents.email_script import HELP, email_asked, said, words

NAME = "email-offline-adk"
WORD_DELAY = 0.05


def reply_to(request: LlmRequest) -> types.Content:
    """The model's next content: a sentence about the last call's result, else a `sendEmail`
    call for the last user message, else what it can do."""
    last = request.contents[-1] if request.contents else None
    parts = last.parts or [] if last is not None else []
    results = [part.function_response for part in parts if part.function_response]
    if results:
        return _text(" ".join(said(result.response or {}) for result in results))
    text = "".join(part.text or "" for part in parts)
    args = email_asked(text) if last is not None and last.role == "user" else None
    if args is not None:
        call = types.FunctionCall(id=f"call_{uuid.uuid4().hex[:24]}", name="sendEmail", args=args)
        return types.Content(role="model", parts=[types.Part(function_call=call)])
    return _text(HELP)


def _text(text: str) -> types.Content:
    return types.Content(role="model", parts=[types.Part(text=text)])


class EmailModel(BaseLlm):
    """Scripted: answers with `reply_to`, its text streamed word by word."""

    word_delay: ClassVar[float] = WORD_DELAY

    @classmethod
    def supported_models(cls) -> list[str]:
        return [NAME]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        content = reply_to(llm_request)
        text = "".join(part.text or "" for part in content.parts or ())
        if stream and text:
            for chunk in words(text):
                await asyncio.sleep(self.word_delay)
                yield LlmResponse(content=_text(chunk), partial=True)
        yield LlmResponse(content=content, turn_complete=True, usage_metadata=usage(content))


def usage(content: types.Content) -> types.GenerateContentResponseUsageMetadata:
    """Tokens as a real model reports them (ADK's metrics ask): a word a token, here."""
    said = len(words(" ".join(part.text or "" for part in content.parts or ())))
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=0, candidates_token_count=said, total_token_count=said
    )


LLMRegistry.register(EmailModel)
