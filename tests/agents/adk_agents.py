"""Google ADK agents of the tests' own (`AGENT_MODULES` of tests/agents/test_adk_agents.py),
on scripted models registered in ADK's `LLMRegistry`: the example's agent with a rejection
note, one that asks about three calls at once, one whose approvals expire in a moment, one
that counts what it was told, one that asks the user for input (ADK's `request_input`), one
whose provider refuses every request, the example's on a model that speaks slowly, and one
whose run grows too large to pause; one whose tool's activity runs until a stop; one whose
long-running tool waits for a manager (`adk-long`, and `adk-long-soon` whose wait expires in a
moment); and one on
ADK's own `Gemini` model, whose requests go to a loopback server replaying recorded Gemini
streams (`LoopbackGemini.base_url_of_replay`, set by the test)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncGenerator, Callable
from datetime import timedelta
from functools import cached_property
from typing import Any, ClassVar

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm, Gemini, LLMRegistry
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools._request_input_tool import request_input
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.long_running_tool import LongRunningFunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import Client, types
from temporalio import activity, workflow
from temporalio.exceptions import ApplicationError

from ag_ui_temporal.agents import register_activities
from ag_ui_temporal.agents.adk_agents import register_adk_agent
from ag_ui_temporal.examples.agents.adk_email import AGENT, sendEmail
from ag_ui_temporal.examples.agents.adk_email_model import EmailModel, usage

NOTE = {"type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]}
SEND = FunctionTool(sendEmail, require_confirmation=True)


def _contents(request: LlmRequest) -> list[types.Content]:
    return list(request.contents or [])


def _text(text: str) -> types.Content:
    return types.Content(role="model", parts=[types.Part(text=text)])


def _results(content: types.Content) -> list[types.FunctionResponse]:
    return [part.function_response for part in content.parts or () if part.function_response]


def _call(name: str, args: dict[str, Any]) -> types.Part:
    call_id = f"call_{uuid.uuid4().hex[:24]}"
    return types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args))


def three(request: LlmRequest) -> types.Content:
    """Three calls for "three"; then what became of each."""
    last = _contents(request)[-1]
    if results := _results(last):
        said = [
            "sent" if (r.response or {}).get("sent") else str((r.response or {}).get("error"))
            for r in results
        ]
        return _text(", ".join(said))
    emails = [{"to": f"user{n}@example.com", "subject": "Hi", "body": "hi"} for n in (1, 2, 3)]
    return types.Content(role="model", parts=[_call("sendEmail", args) for args in emails])


def count(request: LlmRequest) -> types.Content:
    told = sum(
        1
        for content in _contents(request)
        if content.role == "user" and any(part.text for part in content.parts or ())
    )
    return _text(f"You said {told} things.")


def ask_name(request: LlmRequest) -> types.Content:
    """Asks for the user's name (`request_input`), then greets them by it."""
    last = _contents(request)[-1]
    if results := _results(last):
        return _text(f"Hello, {(results[0].response or {}).get('result', results[0].response)}.")
    schema = {"type": "string", "minLength": 1}
    return types.Content(
        role="model",
        parts=[
            _call("adk_request_input", {"message": "What is your name?", "response_schema": schema})
        ],
    )


async def bulky() -> str:
    """A result too large for a paused run's session to carry beside the rest."""
    return "x" * 300_000


def bulk(request: LlmRequest) -> types.Content:
    """`bulky`, then an email that needs approval: the run pauses over its session's budget.
    "thanks" is answered, from whatever the session carried on."""
    contents = _contents(request)
    users = [c for c in contents if c.role == "user" and any(p.text for p in c.parts or ())]
    if "thanks" in "".join(p.text or "" for p in users[-1].parts or ()):
        return _text("You're welcome.")
    if not _results(contents[-1]):
        return types.Content(role="model", parts=[_call("bulky", {})])
    email = {"to": "user1@example.com", "subject": "Hi", "body": "hi"}
    return types.Content(role="model", parts=[_call("sendEmail", email)])


async def wait_a_while(tool_context: ToolContext) -> str:
    """A tool whose activity runs until it is cancelled (a stop's test)."""
    return str(
        await workflow.execute_activity(
            "waitAWhile",
            start_to_close_timeout=timedelta(minutes=1),
            heartbeat_timeout=timedelta(seconds=2),
        )
    )


@activity.defn(name="waitAWhile")
async def wait_a_while_activity() -> str:
    while True:  # until cancelled (a heartbeat's answer)
        activity.heartbeat()
        await asyncio.sleep(0.1)


def waits(request: LlmRequest) -> types.Content:
    """`wait_a_while` for "wait"; "hello" is answered."""
    last = _contents(request)[-1]
    if "wait" in "".join(part.text or "" for part in last.parts or ()):
        return types.Content(role="model", parts=[_call("wait_a_while", {})])
    return _text("Hello.")


def ask_manager(amount: int) -> None:
    """Ask a manager to approve a reimbursement; the answer comes later, from them."""


def reimburse(request: LlmRequest) -> types.Content:
    """`ask_manager` for "reimburse"; then what the manager said."""
    last = _contents(request)[-1]
    if results := _results(last):
        return _text(f"The manager said: {json.dumps(results[0].response, sort_keys=True)}.")
    return types.Content(role="model", parts=[_call("ask_manager", {"amount": 5})])


def broken(request: LlmRequest) -> types.Content:
    """A provider that refuses every request for good (a bad key, say)."""
    raise ApplicationError("the provider refused the request", non_retryable=True)


class Scripted(BaseLlm):
    """A model whose next content `SCRIPTS[model]` makes from the request."""

    SCRIPTS: ClassVar[dict[str, Callable[[LlmRequest], types.Content]]] = {
        "adk-three": three,
        "adk-count": count,
        "adk-ask-name": ask_name,
        "adk-broken": broken,
        "adk-bulk": bulk,
        "adk-waits": waits,
        "adk-long": reimburse,
    }

    @classmethod
    def supported_models(cls) -> list[str]:
        return list(cls.SCRIPTS)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        content = self.SCRIPTS[self.model](llm_request)
        yield LlmResponse(content=content, turn_complete=True, usage_metadata=usage(content))


LLMRegistry.register(Scripted)

register_adk_agent(AGENT.clone(), name="adk-note", reject_payload=NOTE)
register_adk_agent(LlmAgent(name="three", model="adk-three", tools=[SEND]), name="adk-three")
register_adk_agent(AGENT.clone(), name="adk-soon", approval_expires_in=timedelta(seconds=2))
register_adk_agent(LlmAgent(name="counter", model="adk-count"), name="adk-count")
register_adk_agent(
    LlmAgent(name="asker", model="adk-ask-name", tools=[request_input]),
    name="adk-ask",
    input_expires_in=timedelta(hours=1),
)
register_adk_agent(LlmAgent(name="broken", model="adk-broken"), name="adk-broken")


class Slow(EmailModel):
    """The example's model, its words 0.6 s apart: a stop comes while it speaks."""

    word_delay: ClassVar[float] = 0.6

    @classmethod
    def supported_models(cls) -> list[str]:
        return ["adk-slow"]


LLMRegistry.register(Slow)
register_adk_agent(AGENT.clone(update={"model": "adk-slow"}), name="adk-slow")


register_adk_agent(LlmAgent(name="bulk", model="adk-bulk", tools=[bulky, SEND]), name="adk-bulk")
register_adk_agent(
    LlmAgent(name="waits", model="adk-waits", tools=[wait_a_while]), name="adk-waits"
)
register_activities(lambda worker: [wait_a_while_activity])
MANAGER = LlmAgent(
    name="reimburser", model="adk-long", tools=[LongRunningFunctionTool(ask_manager)]
)
register_adk_agent(
    MANAGER, name="adk-long", approval_messages={"ask_manager": "Reimburse {amount} EUR?"}
)
register_adk_agent(MANAGER.clone(), name="adk-long-soon", input_expires_in=timedelta(seconds=2))


class LoopbackGemini(Gemini):
    """ADK's own Gemini model, google-genai's client at `base_url` (a test's replay server of
    recorded Gemini streams, `tests.llm.openai_replay`)."""

    base_url_of_replay: ClassVar[str] = ""

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"loopback-gemini-.*"]

    @cached_property
    def api_client(self) -> Client:
        options = types.HttpOptions(base_url=self.base_url_of_replay)
        return Client(api_key="test", http_options=options)


async def get_country() -> str:
    """The user's country."""
    return "Mexico"


LLMRegistry.register(LoopbackGemini)
register_adk_agent(
    LlmAgent(
        name="capitals",
        model="loopback-gemini-3-pro-preview",
        tools=[FunctionTool(get_country, require_confirmation=True)],
    ),
    name="adk-gemini",
)
