"""Client tools that need approval, through a real worker and gateway: a call of one is a
`tool_call` interrupt first (TanStack's `tool-approval` binding); approved, the call goes to the
client with the approved arguments and its result continues the agent; rejected, it never
reaches the client and the model hears why. With a server tool in the same response, both are
asked in one batch. TanStack's real `ChatClient` runs its `.client()` tool once, or never."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from temporalio.client import Client

from ag_ui_temporal import ThreadDeps, register, registered, thread_capabilities
from ag_ui_temporal.gateway.tanstack import hash_schema_input
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract.tools import CLIENT_TOOL_EVENT
from tests.agents.test_frontend_tools import tool_result
from tests.agui import STREAMS, error, finished, interrupts, resolve, run, texts, types
from tests.conftest import serve_stack
from tests.node_clients import requires_node, run_node, streams_of

AGENT = "client-approvals"
"""Registered with `approve_client_tools=["pickColor"]`."""
PICK_COLOR: dict[str, Any] = {
    "name": "pickColor",
    "description": "Ask the user to pick a color in the browser.",
    "parameters": {
        "type": "object",
        "properties": {"question": {"type": "string"}},
        "required": ["question"],
    },
}
"""A client tool the agent names as needing approval (the client's request does not say)."""
SHARE_LOCATION: dict[str, Any] = {
    "name": "shareLocation",
    "description": "Share the user's location.",
    "parameters": {"type": "object", "properties": {"precision": {"type": "string"}}},
    "needsApproval": True,
}
"""A client tool the agent does not name: the client marks it itself."""
SHOW_NOTE: dict[str, Any] = {
    "name": "showNote",
    "description": "Show the user a note.",
    "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
}
"""A client tool that needs no approval."""
CALLS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "color": [("pickColor", {"question": "Which color?"})],
    "location": [("shareLocation", {"precision": "city"})],
    "all": [
        ("pickColor", {"question": "Which color?"}),
        ("wire", {"amount": 100, "to": "bob"}),
        ("showNote", {"text": "hi"}),
    ],
}
"""A prompt with one of these words gets these calls, in one response."""
YES = {"approved": True}
HEARD: dict[str, str] = {}
"""What the model read as each call's result, by tool call id."""
WIRES: Counter[str] = Counter()
"""Executions of the server tool `wire`, by tool call id."""


async def _respond(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    last = messages[-1]
    returns = [part for part in last.parts if isinstance(part, ToolReturnPart)]
    if isinstance(last, ModelRequest) and returns:
        HEARD.update({part.tool_call_id: part.model_response_str() for part in returns})
        yield "noted"
        return
    prompt = " ".join(str(getattr(part, "content", "")) for part in last.parts)
    calls = next((calls for word, calls in CALLS.items() if word in prompt), [])
    if not calls:
        yield "Say color, location or both."
        return
    yield {
        index: DeltaToolCall(name=name, json_args=json.dumps(args), tool_call_id=new_call())
        for index, (name, args) in enumerate(calls)
    }


def new_call() -> str:
    return f"call_{uuid.uuid4().hex}"


def build_agent() -> Agent[ThreadDeps, str]:
    agent = Agent(
        FunctionModel(stream_function=_respond),
        name=AGENT,
        deps_type=ThreadDeps,
        capabilities=thread_capabilities(),
    )

    @agent.tool(requires_approval=True)
    async def wire(ctx: RunContext[ThreadDeps], amount: int, to: str) -> dict[str, Any]:
        WIRES[ctx.tool_call_id or ""] += 1
        return {"sent": amount, "to": to}

    return agent


@pytest.fixture(scope="module")
async def stack(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    if registered(AGENT) is None:
        register(build_agent(), approve_client_tools=["pickColor"])
    name = f"client-approvals-{uuid.uuid4().hex}"
    settings = Settings(data_dir=data_dir / name, task_queue=name)
    async with serve_stack(client, settings, executor) as http:
        yield http, str(http.base_url).rstrip("/")


@pytest.fixture
def http(stack: tuple[httpx.AsyncClient, str]) -> httpx.AsyncClient:
    return stack[0]


def handed(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the run handed to the client to run: its `CUSTOM` events' values."""
    return [e["value"] for e in events if e["type"] == "CUSTOM" and e["name"] == CLIENT_TOOL_EVENT]


async def test_approved_with_edits_the_client_runs_it_and_the_agent_hears_its_result(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    asked = await run(http, thread_id, agent=AGENT, text="pick a color", tools=[PICK_COLOR])
    [approval] = interrupts(asked)
    assert handed(asked) == [] and "TOOL_CALL_START" in types(asked)
    binding = approval["metadata"]["tanstack:interruptBinding"]
    assert (approval["reason"], binding["kind"]) == ("tool_call", "tool-approval")
    assert (binding["toolName"], binding["toolCallId"]) == ("pickColor", approval["toolCallId"])
    assert binding["originalArgs"] == {"question": "Which color?"}
    # the input schema as TanStack's client hashes a zod tool's: the dialect it drops on the wire
    hashed = {"$schema": "https://json-schema.org/draft/2020-12/schema", **PICK_COLOR["parameters"]}
    assert binding["inputSchemaHash"] == hash_schema_input(hashed)

    # a tool message for a call not yet approved is not its result: the run brings nothing,
    # and shows what awaits again
    early = tool_result(approval["toolCallId"], {"color": "green"})
    again = await run(http, thread_id, agent=AGENT, messages=[early], tools=[PICK_COLOR])
    assert [i["id"] for i in interrupts(again)] == [approval["id"]] and handed(again) == []

    edits = {"approved": True, "editedArgs": {"question": "Red or blue?"}}
    approved = await run(
        http, thread_id, agent=AGENT, resume=[resolve(approval, edits)], tools=[PICK_COLOR]
    )
    assert handed(approved) == [
        {
            "toolCallId": approval["toolCallId"],
            "toolName": "pickColor",
            "input": edits["editedArgs"],
        }
    ]
    assert finished(approved)["outcome"] == {"type": "success"}
    assert "TOOL_CALL_RESULT" not in types(approved) and approval["toolCallId"] not in HEARD

    answer = tool_result(approval["toolCallId"], {"color": "red"})
    done = await run(http, thread_id, agent=AGENT, messages=[answer], tools=[PICK_COLOR])
    assert texts(done) == "noted" and finished(done)["outcome"] == {"type": "success"}
    assert json.loads(HEARD[approval["toolCallId"]]) == {"color": "red"}


async def test_rejected_it_never_reaches_the_client(http: httpx.AsyncClient, thread_id: str):
    """`shareLocation` needs approval by the client's own mark on its tool entry."""
    [approval] = interrupts(
        await run(http, thread_id, agent=AGENT, text="share my location", tools=[SHARE_LOCATION])
    )
    assert approval["metadata"]["tanstack:interruptBinding"]["toolName"] == "shareLocation"
    rejected = await run(
        http,
        thread_id,
        agent=AGENT,
        resume=[resolve(approval, {"approved": False})],
        tools=[SHARE_LOCATION],
    )
    assert handed(rejected) == [] and texts(rejected) == "noted"
    assert HEARD[approval["toolCallId"]] == "you rejected it"
    # a result sent anyway is not taken: the call has its result, and nothing runs
    stray = tool_result(approval["toolCallId"], {"lat": 0})
    ignored = await run(http, thread_id, agent=AGENT, messages=[stray], tools=[SHARE_LOCATION])
    assert texts(ignored) == "" and HEARD[approval["toolCallId"]] == "you rejected it"


async def test_with_a_server_tool_and_another_client_tool(http: httpx.AsyncClient, thread_id: str):
    """One response calls `pickColor`, the server's `wire` (both need approval) and `showNote`
    (needs none): the two approvals are one batch, `showNote` goes to the client at once, and
    the model goes on only once every result is in."""
    tools = [PICK_COLOR, SHOW_NOTE]
    asked = await run(http, thread_id, agent=AGENT, text="all", tools=tools)
    [note] = handed(asked)
    color, wire = sorted(
        interrupts(asked), key=lambda i: i["metadata"]["ag-ui-temporal:toolCall"]["name"]
    )
    assert note["toolName"] == "showNote"
    assert [color["reason"], wire["reason"]] == ["tool_call", "tool_call"]
    partial = error(await run(http, thread_id, agent=AGENT, resume=[resolve(color, YES)]))
    assert partial["code"] == "PARTIAL_RESUME"

    # showNote's result comes with the answers (as TanStack's client sends it), from a client
    # that does not list its tools again (or with a decision made outside the chat): the
    # approved pickColor still goes to the client, wire runs now, once, and the model waits
    shown = tool_result(note["toolCallId"], {"shown": True})
    both = [resolve(color, YES), resolve(wire, YES)]
    approved = await run(http, thread_id, agent=AGENT, resume=both, messages=[shown])
    assert [value["toolCallId"] for value in handed(approved)] == [color["toolCallId"]]
    assert finished(approved)["outcome"] == {"type": "success"} and texts(approved) == ""
    assert WIRES[wire["toolCallId"]] == 1
    assert not {note["toolCallId"], wire["toolCallId"], color["toolCallId"]} & set(HEARD)

    answer = tool_result(color["toolCallId"], {"color": "blue"})
    done = await run(http, thread_id, agent=AGENT, messages=[answer], tools=tools)
    assert texts(done) == "noted"
    assert json.loads(HEARD[color["toolCallId"]]) == {"color": "blue"}
    assert json.loads(HEARD[wire["toolCallId"]]) == {"sent": 100, "to": "bob"}
    assert json.loads(HEARD[note["toolCallId"]]) == {"shown": True}
    assert WIRES[wire["toolCallId"]] == 1


# -- TanStack's real ChatClient ------------------------------------------------------------


async def chat(url: str, thread_id: str, decision: dict[str, Any]) -> list[dict[str, Any]]:
    """TanStack's `ChatClient` with `pickColor` as an app declares it (zod, `needsApproval`,
    `.client(execute)`): asked about, then `decision` (an approval item's); its snapshots."""
    tool = {**PICK_COLOR, "needsApproval": True, "zod": True, "result": {"color": "teal"}}
    job = {
        "url": f"{url}/agents/{AGENT}",
        "threadId": thread_id,
        "clientTools": [tool],
        "steps": [{"send": "pick a color"}, {"resolve": [{"index": 0, **decision}]}],
    }
    snapshots: list[dict[str, Any]] = (await run_node("tanstack_chat.mjs", job))["snapshots"]
    STREAMS.extend(streams_of(snapshots))
    assert [snapshot["stepError"] for snapshot in snapshots] == [None, None]
    return snapshots


@requires_node
async def test_tanstack_chat_client_runs_an_approved_client_tool_once(
    stack: tuple[httpx.AsyncClient, str], thread_id: str
):
    _, url = stack
    edits = {"question": "Teal or not?"}
    asked, decided = await chat(url, thread_id, {"approve": True, "editedArgs": edits})
    [item] = asked["interrupts"]
    assert (item["kind"], item["canResolve"]) == ("tool-approval", True)
    assert asked["toolExecutions"] == []  # asked about, not run
    # the client ran it once, with the approved arguments, and sent its result on its own
    [ran] = decided["toolExecutions"]
    assert (ran["name"], ran["toolCallId"]) == ("pickColor", item["toolCallId"])
    assert ran["input"] == edits
    assert json.loads(HEARD[item["toolCallId"]]) == {"color": "teal"}
    assert (decided["status"], decided["interrupts"], decided["error"]) == ("ready", [], None)


@requires_node
async def test_tanstack_chat_client_never_runs_a_rejected_client_tool(
    stack: tuple[httpx.AsyncClient, str], thread_id: str
):
    _, url = stack
    asked, decided = await chat(url, thread_id, {"approve": False})
    [item] = asked["interrupts"]
    assert item["kind"] == "tool-approval"
    assert decided["toolExecutions"] == [] and decided["interrupts"] == []
    assert HEARD[item["toolCallId"]] == "you rejected it"


def test_the_names_are_a_collection_not_one_string():
    with pytest.raises(TypeError, match="tool names"):
        register(build_agent(), approve_client_tools="pickColor", replace=True)
