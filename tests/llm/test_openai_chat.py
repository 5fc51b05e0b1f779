"""The real provider path: `LLM_MODEL=openai-chat:...` with `OPENAI_BASE_URL` builds an
`OpenAIChatModel` whose requests go to an OpenAI-compatible server (here, a loopback one
replaying recorded streams), so the openai SDK's and pydantic-ai's own parsing runs."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import SecretStr
from pydantic_ai import (
    Agent,
    DeferredToolRequests,
    DeferredToolResults,
    PartDeltaEvent,
    PartStartEvent,
    RunContext,
    TextPart,
    TextPartDelta,
    ToolCallPart,
)
from pydantic_ai.models.openai import OpenAIChatModel

from ag_ui_temporal.agents.models import resolve_model
from ag_ui_temporal.settings import Settings
from tests.llm.openai_replay import TEXT, TEXT_REPLY, TOOL_ARGS, TOOL_CALL, TOOL_NAME, OpenAIReplay


def model_for(replay: OpenAIReplay) -> OpenAIChatModel:
    settings = Settings(
        llm_model="openai-chat:gpt-4.1-mini",
        openai_base_url=replay.base_url,
        openai_api_key=SecretStr("test"),
    )
    model = resolve_model(settings)
    assert isinstance(model, OpenAIChatModel)
    return model


async def test_text_streams_in_several_deltas(openai_replay_server: OpenAIReplay) -> None:
    chunks: list[str] = []

    async def collect(_: RunContext[Any], events: Any) -> None:
        async for event in events:
            if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                chunks.append(event.part.content)
            elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                chunks.append(event.delta.content_delta)

    agent = Agent(model_for(openai_replay_server), instructions="Be brief.")
    result = await agent.run("What is the capital of the UK?", event_stream_handler=collect)

    assert result.output == TEXT_REPLY
    assert len([c for c in chunks if c]) == 8  # "The", " capital", ... ".": as recorded
    assert "".join(chunks) == TEXT_REPLY
    (sent,) = openai_replay_server.requests
    assert sent.replayed == TEXT
    assert sent.headers["authorization"] == "Bearer test"
    assert sent.body["model"] == "gpt-4.1-mini"
    assert sent.body["stream"] is True
    assert sent.body["messages"][-1] == {
        "role": "user",
        "content": "What is the capital of the UK?",
    }


async def test_a_recorded_tool_call_runs_the_tool_then_the_text(
    openai_replay_server: OpenAIReplay,
) -> None:
    ran: list[str] = []
    agent = Agent(model_for(openai_replay_server))

    @agent.tool_plain
    def get_capital(country: str) -> str:
        ran.append(country)
        return "London"

    async with agent.run_stream("What is the capital of the UK? Use the tool.") as stream:
        output = await stream.get_output()

    assert output == TEXT_REPLY
    assert ran == ["UK"]
    first, second = openai_replay_server.requests
    assert (first.replayed, second.replayed) == (TOOL_CALL, TEXT)
    assert [tool["function"]["name"] for tool in first.body["tools"]] == [TOOL_NAME]
    call = second.body["messages"][-2]["tool_calls"][0]
    assert (call["id"], call["function"]["name"]) == ("call_ZR5UUuTt3pf61kjwAJIYdVMj", TOOL_NAME)
    assert second.body["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_ZR5UUuTt3pf61kjwAJIYdVMj",
        "content": "London",
    }


async def test_a_tool_that_needs_approval_ends_the_run_with_its_call(
    openai_replay_server: OpenAIReplay,
) -> None:
    agent = Agent(model_for(openai_replay_server), output_type=[str, DeferredToolRequests])

    @agent.tool_plain(requires_approval=True)
    def get_capital(country: str) -> str:
        return "London"

    first = await agent.run("What is the capital of the UK?", event_stream_handler=_drain)
    assert isinstance(first.output, DeferredToolRequests)
    (call,) = first.output.approvals
    assert isinstance(call, ToolCallPart)
    assert (call.tool_name, call.args_as_dict()) == (TOOL_NAME, TOOL_ARGS)
    assert call.tool_call_id == "call_ZR5UUuTt3pf61kjwAJIYdVMj"

    approved = DeferredToolResults(approvals={call.tool_call_id: True})
    second = await agent.run(
        message_history=first.all_messages(),
        deferred_tool_results=approved,
        event_stream_handler=_drain,
    )
    assert second.output == TEXT_REPLY
    assert [r.replayed for r in openai_replay_server.requests] == [TOOL_CALL, TEXT]


@pytest.mark.parametrize(
    ("setting", "problem"),
    [
        ("nope:model", "Unknown provider"),
        ("gpt-4o", "Unknown model"),
        ("openai-chat:", "names no model"),
    ],
)
def test_a_bad_model_string_names_the_setting(setting: str, problem: str) -> None:
    with pytest.raises(ValueError, match=rf"^LLM_MODEL='{setting}'.*{problem}"):
        resolve_model(Settings(llm_model=setting))


def test_unset_names_the_setting() -> None:
    """Each agent says what runs without a model; the library picks none for it."""
    with pytest.raises(ValueError, match=r"^LLM_MODEL is not set"):
        resolve_model(Settings(llm_model=None))


def test_openai_responses_take_the_same_endpoint_settings() -> None:
    model = resolve_model(
        Settings(llm_model="openai:gpt-4.1-mini", openai_base_url="http://127.0.0.1:9/v1")
    )
    assert type(model).__name__ == "OpenAIResponsesModel"
    assert model.base_url == "http://127.0.0.1:9/v1/"


async def _drain(_: RunContext[Any], events: Any) -> None:
    """Any event handler makes `run` stream its model requests."""
    async for _event in events:
        pass
