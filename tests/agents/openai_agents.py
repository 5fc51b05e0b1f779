"""OpenAI Agents SDK agents of the tests' own (`AGENT_MODULES` of tests/agents/
test_openai_agents.py), on scripted models: the example's agent with a rejection note, one
that asks about three calls at once, one whose approvals expire in a moment, one that counts
what it was told; and one on the SDK's own Chat Completions model, whose requests go to a
loopback server replaying recorded OpenAI streams (`LOOPBACK.base_url`, set by the test)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from agents import (
    Agent,
    Model,
    ModelProvider,
    ModelResponse,
    OpenAIChatCompletionsModel,
    RunConfig,
    Usage,
    function_tool,
)
from openai import AsyncOpenAI
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputItem
from temporalio.exceptions import ApplicationError

from ag_ui_temporal.agents.openai_agents import register_openai_agent
from ag_ui_temporal.examples.agents.openai_email import AGENT, SEND
from ag_ui_temporal.examples.agents.openai_email_model import EmailModels, _message, reply_to

QUIET = RunConfig(tracing_disabled=True)
NOTE = {"type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]}


class Scripted(Model):
    """A model whose next output items `answer` makes from the request's input items."""

    def __init__(self, answer: Callable[[list[Any]], list[ResponseOutputItem]]) -> None:
        self.answer = answer

    async def get_response(
        self, system_instructions: str | None, input: str | list[Any], *args: Any, **kwargs: Any
    ) -> ModelResponse:
        listed = input if isinstance(input, list) else [{"role": "user", "content": input}]
        items = [i if isinstance(i, dict) else i.model_dump() for i in listed]
        return ModelResponse(output=self.answer(items), usage=Usage(requests=1), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError  # answers whole (the model activity takes that too)


class Models(ModelProvider):
    def __init__(self, answer: Callable[[list[Any]], list[ResponseOutputItem]]) -> None:
        self.model = Scripted(answer)

    def get_model(self, model_name: str | None) -> Model:
        return self.model


def _call(n: int) -> ResponseFunctionToolCall:
    args = {"to": f"user{n}@example.com", "subject": "Hi", "body": "hi"}
    return ResponseFunctionToolCall(
        type="function_call",
        call_id=f"call_{uuid.uuid4().hex[:24]}",
        name="sendEmail",
        arguments=json.dumps(args),
    )


def three(items: list[Any]) -> list[ResponseOutputItem]:
    """Three calls for "three"; then what became of each."""
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    if outputs and items[-1].get("type") == "function_call_output":
        said = ["sent" if '"sent": true' in str(o["output"]) else str(o["output"]) for o in outputs]
        return [_message(", ".join(said[-3:]))]
    return [_call(1), _call(2), _call(3)]


def count(items: list[Any]) -> list[ResponseOutputItem]:
    told = sum(1 for i in items if i.get("role") == "user")
    return [_message(f"You said {told} things.")]


register_openai_agent(
    AGENT.clone(model="email-note"),
    name="openai-note",
    run_config=QUIET,
    reject_payload=NOTE,
    model_provider=EmailModels(),
)
register_openai_agent(
    Agent(name="Three", model="three", tools=[SEND]),
    name="openai-three",
    run_config=QUIET,
    model_provider=Models(three),
)
register_openai_agent(
    AGENT.clone(model="email-soon"),
    name="openai-soon",
    run_config=QUIET,
    approval_expires_in=timedelta(seconds=2),
    model_provider=EmailModels(),
)
register_openai_agent(
    Agent(name="Counter", model="count"),
    name="openai-count",
    run_config=QUIET,
    model_provider=Models(count),
)


class Loopback(ModelProvider):
    """OpenAI's Chat Completions through the SDK's own model class, at `base_url`."""

    base_url = ""

    def get_model(self, model_name: str | None) -> Model:
        client = AsyncOpenAI(base_url=self.base_url, api_key="test", max_retries=0)
        return OpenAIChatCompletionsModel(model=model_name or "gpt-4o-mini", openai_client=client)


LOOPBACK = Loopback()


@function_tool(needs_approval=True)
async def get_capital(country: str) -> str:
    """The capital of a country. (`async`: the SDK runs a plain function in a thread, which
    workflow code has none of.)"""
    return {"UK": "London"}.get(country, "unknown")


register_openai_agent(
    Agent(name="Capitals", model="gpt-4o-mini", tools=[get_capital]),
    name="openai-capitals",
    run_config=QUIET,
    model_provider=LOOPBACK,
)


def broken(items: list[Any]) -> list[ResponseOutputItem]:
    """A provider that refuses every request for good (a bad key, say)."""
    raise ApplicationError("the provider refused the request", non_retryable=True)


register_openai_agent(
    Agent(name="Broken", model="broken"),
    name="openai-broken",
    run_config=QUIET,
    model_provider=Models(broken),
)


def handed(items: list[Any]) -> list[ResponseOutputItem]:
    """The email assistant's model after a handoff: the user's message answered as the
    example's model answers it, the transfer's own result skipped."""
    names = {i.get("call_id"): i.get("name") for i in items if i.get("type") == "function_call"}
    last = items[-1]
    if last.get("type") == "function_call_output" and names.get(last["call_id"]) != "sendEmail":
        users = [i for i in items if i.get("role") == "user"]
        return [reply_to(users[-1:])]
    return [reply_to(items)]


def _handoff() -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        type="function_call",
        call_id=f"call_{uuid.uuid4().hex[:24]}",
        name="transfer_to_email_assistant",
        arguments="{}",
    )


# A triage agent that hands the conversation to the example's email assistant, whose
# `sendEmail` then asks: a handoff's approvals are the served agent's.
class ByName(ModelProvider):
    def __init__(self, models: dict[str, Model]) -> None:
        self.models = models

    def get_model(self, model_name: str | None) -> Model:
        return self.models[model_name or ""]


register_openai_agent(
    Agent(name="Triage", model="triage", handoffs=[AGENT.clone(model="email-handoff")]),
    name="openai-triage",
    run_config=QUIET,
    model_provider=ByName(
        {"triage": Scripted(lambda items: [_handoff()]), "email-handoff": Scripted(handed)}
    ),
)


@function_tool
async def bulky() -> str:
    """A result too large for a paused run to carry beside the rest (`STATE_BYTES`)."""
    return "x" * 300_000


def bulk(items: list[Any]) -> list[ResponseOutputItem]:
    """`bulky`, then an email that needs approval: the run pauses over its state's budget.
    "thanks" is answered, from whatever the conversation carried on."""
    users = [i for i in items if i.get("role") == "user"]
    if "thanks" in str(users[-1].get("content")):
        return [_message("You're welcome.")]
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    if not outputs:
        call_id = f"call_{uuid.uuid4().hex[:24]}"
        return [
            ResponseFunctionToolCall(
                type="function_call", call_id=call_id, name="bulky", arguments="{}"
            )
        ]
    return [_call(1)]


register_openai_agent(
    Agent(name="Bulk", model="bulk", tools=[bulky, SEND]),
    name="openai-bulk",
    run_config=QUIET,
    model_provider=Models(bulk),
)
