"""An agent's approval tools as TanStack AI definitions (`GET /agents/{agent}/tools.ts`,
`gateway/approval_tools.py`), for the demo `assistant`, the LangGraph example and an agent
this module registers: the real `@tanstack/ai` hashes every definition like the server's
binding, TypeScript 5.9 compiles each file with `originalArgs` typed, and the real
`ChatClient` that registers nothing but them gets `tool-approval` items with `toolName` and
`originalArgs` for every approval. A client whose definition differs (written as TanStack's
guide writes one) gets `generic` items, each marked with the difference, and the gateway logs
it once per agent and tool."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel
from pydantic_ai import Agent, ApprovalRequired, RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from temporalio.client import Client

from ag_ui_temporal import ThreadDeps, ask_person, register, registered, thread_capabilities
from ag_ui_temporal.agents.approval_tools import ApprovalTool, agent_approvals
from ag_ui_temporal.demo.tools import SEND_EMAIL, SUBMIT_EXPENSE, approval_schema
from ag_ui_temporal.gateway import approval_tools
from ag_ui_temporal.gateway.tanstack import read_approval_response_schema, tool_approval_binding
from ag_ui_temporal.gateway.tanstack.client_tools import (
    CLIENT_TOOL_MISMATCH_KEY,
    schema_difference,
)
from ag_ui_temporal.gateway.tanstack.tool_definitions import typescript_definitions
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import approval_response_schema
from tests.agui import STREAMS
from tests.conftest import serve_stack
from tests.effects import EffectLog
from tests.gateway.approval_tools import ADA, EDITED, EMAIL
from tests.node_clients import requires_node, run_node

EXAMPLE = "ag_ui_temporal.examples.agents.email_graph"
AGENT = "tools-ts"
"""The agent this module registers (`build_agent`)."""
WHY = {
    "type": "object",
    "properties": {"reason": {"type": "string", "maxLength": 200}},
    "required": ["reason"],
    "additionalProperties": False,
}
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "wire": ("wire", {"amount": 100, "to": "bob"}),
    "refund": ("refund", {"order_id": "A-1", "amount": 80.5}),
    "close": ("close_account", {"account_id": "acc-9"}),
}
"""A prompt with one of these words gets this call."""


class Leg(BaseModel):
    city: str
    nights: int


async def _respond(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    last = messages[-1]
    if isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts):
        yield "done"
        return
    prompt = " ".join(str(getattr(part, "content", "")) for part in last.parts)
    call = next((call for word, call in CALLS.items() if word in prompt), None)
    if call is None:
        yield "Say wire, refund or close."
        return
    name, args = call
    yield {0: DeltaToolCall(name=name, json_args=json.dumps(args), tool_call_id=new_call())}


def new_call() -> str:
    return f"call_{uuid.uuid4().hex}"


def build_agent() -> Agent[ThreadDeps, str]:
    """Approval tools of every kind the writer knows, and the tools it must leave out."""
    agent = Agent(
        FunctionModel(stream_function=_respond),
        name=AGENT,
        deps_type=ThreadDeps,
        capabilities=thread_capabilities(),
    )

    @agent.tool(requires_approval=True)
    async def wire(ctx: RunContext[ThreadDeps], amount: int, to: str) -> str:
        """Wire `amount` EUR to `to`."""
        return f"wired {amount} to {to}"

    @agent.tool(metadata=ask_person("Refund {amount} EUR on order {order_id}?"))
    async def refund(ctx: RunContext[ThreadDeps], order_id: str, amount: float) -> str:
        """Refund an order."""
        if not ctx.tool_call_approved:
            raise ApprovalRequired()
        return "refunded"

    @agent.tool_plain(requires_approval=True, metadata=ask_person(reject_payload=WHY))
    async def close_account(account_id: str) -> str:
        """Close an account for good."""
        return "closed"

    @agent.tool_plain(requires_approval=True)
    async def plan_trip(legs: list[Leg]) -> str:
        """Book a trip (its legs are nested models: `$defs`)."""
        return "booked"

    @agent.tool_plain(requires_approval=True, metadata=ask_person(confirm=True))
    async def purge() -> str:
        """Purge everything (a person confirms: no approval envelope)."""
        return "purged"

    @agent.tool_plain(metadata=ask_person(fills_args=True))
    async def fill_form(name: str) -> str:
        """A person fills in the arguments."""
        return name

    @agent.tool_plain
    async def weather(city: str) -> str:
        """Needs nobody."""
        return "sunny"

    return agent


@pytest.fixture(scope="module")
async def stack(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[httpx.AsyncClient]:
    """The assistant, the LangGraph example and `AGENT`, on a worker and a gateway."""
    if registered(AGENT) is None:
        register(build_agent(), approve_client_tools=["pickColor"])
    name = f"tools-ts-{uuid.uuid4().hex}"
    settings = Settings(data_dir=data_dir / name, task_queue=name, agent_modules=[EXAMPLE])
    async with serve_stack(client, settings, executor) as http:
        yield http


@pytest.fixture(scope="module")
async def written(stack: httpx.AsyncClient, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Each agent's `tools.ts`, as the gateway serves it, in a folder of its own."""
    folder = tmp_path_factory.mktemp("tools-ts")
    for agent in ("assistant", "langgraph", AGENT):
        response = await stack.get(f"/agents/{agent}/tools.ts")
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("text/typescript")
        (folder / f"{agent}.ts").write_text(response.text)
    return folder


# --------------------------------------------------------------------------
# Which tools, and the schemas their approvals announce.
# --------------------------------------------------------------------------


async def test_the_approval_tools_of_each_agent(stack: httpx.AsyncClient):
    assistant = agent_approvals("assistant")
    assert assistant is not None
    assert [(t.name, t.asked_by) for t in assistant.tools] == [
        ("sendEmail", "assistant"),
        ("cancelOrder", "orders"),  # the sub-agent's, asked in the assistant's threads
        ("submitExpense", "assistant"),
    ]
    schemas = {t.name: t.response_schema for t in assistant.tools}
    assert schemas["sendEmail"] == approval_schema(SEND_EMAIL)
    assert schemas["submitExpense"] == approval_schema(SUBMIT_EXPENSE)

    graph = agent_approvals("langgraph")
    assert graph is not None
    [send] = graph.tools
    assert (send.name, send.response_schema) == ("sendEmail", approval_schema(SEND_EMAIL))

    own = agent_approvals(AGENT)
    assert own is not None
    assert [t.name for t in own.tools] == ["wire", "refund", "close_account", "plan_trip"]
    assert own.client_tools == ("pickColor",)
    [close] = [t for t in own.tools if t.name == "close_account"]
    assert close.response_schema["oneOf"][1]["properties"]["payload"] == WHY


async def test_the_file_names_what_it_leaves_out(written: Path):
    assistant = (written / "assistant.ts").read_text()
    assert "export const cancelOrder" not in assistant
    assert "//   `cancelOrder`: the sub-agent `orders` asks about it" in assistant
    own = (written / f"{AGENT}.ts").read_text()
    for name in ("wire", "refund", "close_account"):
        assert f"export const {name} = toolDefinition(" in own
    assert "export const plan_trip" not in own
    assert "//   `plan_trip`: its arguments' schema has `$defs`" in own
    assert 'export const clientToolsToApprove: readonly string[] = ["pickColor"]' in own
    for never in ("purge", "fill_form", "weather"):
        assert f'"{never}"' not in own


async def test_an_unknown_agent_is_404(stack: httpx.AsyncClient):
    response = await stack.get("/agents/nobody/tools.ts")
    assert response.status_code == 404
    assert "unknown agent" in response.json()["detail"]


async def test_the_file_is_for_authenticated_callers(client: Client, tmp_path: Path):
    from ag_ui_temporal.gateway.auth import hash_key
    from ag_ui_temporal.gateway.main import create_app

    key = "k-" + "t" * 40
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps([{"sha256": hash_key(key), "principal": "alice"}]))
    app = create_app(Settings(auth_mode="api_key", api_keys_file=keys), client)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as http:
        assert (await http.get("/agents/assistant/tools.ts")).status_code == 401
        answer = await http.get("/agents/assistant/tools.ts", headers={"X-API-Key": key})
        assert answer.status_code == 200
        assert "export const sendEmail = toolDefinition(" in answer.text


# --------------------------------------------------------------------------
# The real @tanstack/ai and TypeScript 5.9 on the files.
# --------------------------------------------------------------------------


HASHES = ("inputSchemaHash", "approvalSchemaHash", "responseSchemaHash")


def bound_hashes(tool: ApprovalTool) -> dict[str, str]:
    """The hashes the gateway binds `tool`'s approvals with."""
    binding = tool_approval_binding(
        "i-1",
        "run-1",
        tool_name=tool.name,
        tool_call_id="call-1",
        original_args={},
        response_schema=tool.response_schema,
    )
    return {key: binding[key] for key in HASHES}


def expected_hashes(agent: str) -> dict[str, dict[str, str]]:
    """Each approval tool's hashes as the gateway binds its approvals."""
    approvals = agent_approvals(agent)
    assert approvals is not None
    return {
        tool.name: bound_hashes(tool)
        for tool in approvals.tools
        # not bound as tool-approvals: generic items whatever a client registers
        if tool.name != "plan_trip" and tool.asked_by == agent
    }


@requires_node
@pytest.mark.parametrize("agent", ["assistant", "langgraph", AGENT])
async def test_tanstack_hashes_each_definition_like_the_server(node: Node, agent: str):
    described = node.described[agent]
    expected = expected_hashes(agent)
    assert described["approvalTools"] == list(expected)
    tools = {tool["name"]: tool for tool in described["tools"]}
    assert set(tools) == set(expected)
    for name, hashes in expected.items():
        tool = tools[name]
        assert tool["needsApproval"] is True, name
        assert {key: tool[key] for key in hashes} == hashes, name
    if agent == AGENT:
        assert described["clientToolsToApprove"] == ["pickColor"]


USAGE = {
    "assistant": """
for (const item of client.getInterrupts()) {
  if (item.kind === 'tool-approval' && item.toolName === 'sendEmail') {
    const to: string = item.originalArgs.to
    // @ts-expect-error: an address is a string
    const wrong: number = item.originalArgs.to
    item.resolveInterrupt(true, { editedArgs: { ...item.originalArgs, to } })
  } else if (item.kind === 'tool-approval' && item.toolName === 'submitExpense') {
    const amount: number = item.originalArgs.amount
    item.resolveInterrupt(amount < 100)
  }
}
""",
    "langgraph": """
for (const item of client.getInterrupts()) {
  if (item.kind === 'tool-approval' && item.toolName === 'sendEmail') {
    const body: string = item.originalArgs.body
    item.resolveInterrupt(true, { editedArgs: { ...item.originalArgs, body } })
  }
}
""",
    AGENT: """
import type { CloseAccountRejectPayload, WireArgs } from './tools'
for (const item of client.getInterrupts()) {
  if (item.kind === 'tool-approval' && item.toolName === 'wire') {
    const args: WireArgs = item.originalArgs
    // @ts-expect-error: the amount is a number
    const wrong: string = item.originalArgs.amount
    item.resolveInterrupt(true, { editedArgs: { ...args, amount: args.amount / 2 } })
  } else if (item.kind === 'tool-approval' && item.toolName === 'close_account') {
    const why: CloseAccountRejectPayload = { reason: 'still in use' }
    item.resolveInterrupt(false, { payload: why })
  } else if (item.kind === 'tool-approval' && item.toolName === 'refund') {
    const amount: number = item.originalArgs.amount
    item.resolveInterrupt(amount < 100)
  }
}
""",
}


def usage(agent: str) -> str:
    """A front end of `agent` that uses its `tools.ts` (imported as './tools')."""
    return f"""
import {{ ChatClient, fetchServerSentEvents }} from '@tanstack/ai-client'
import {{ approvalTools }} from './tools'
const client = new ChatClient({{
  connection: fetchServerSentEvents('/agents/{agent}'),
  tools: approvalTools,
}})
{USAGE[agent]}
"""


@dataclass
class Node:
    """What the real `@tanstack/ai` and TypeScript made of each file (key: its agent)."""

    described: dict[str, dict[str, Any]]
    """The definitions as `@tanstack/ai` reads them, with its hashes."""
    diagnostics: dict[str, list[str]]
    """`tsc --strict`'s on the file and on a front end using it."""


@pytest.fixture(scope="module")
async def node(written: Path, tmp_path_factory: pytest.TempPathFactory) -> Node:
    """Every file of this module (each agent's and `ODD`'s) through one Node process and one
    TypeScript program (the libraries' types are read once; each file's diagnostics are its
    own, every file being a module)."""
    odd = tmp_path_factory.mktemp("odd") / "odd.ts"
    odd.write_text(typescript_definitions(ODD_AGENT, ODD, ["pick'it"]))
    files = {agent: written / f"{agent}.ts" for agent in ("assistant", "langgraph", AGENT)}
    usages = {agent: usage(agent) for agent in files} | {ODD_AGENT: ODD_USAGE}
    files[ODD_AGENT] = odd
    modules = {key: {"path": str(path), "usage": usages[key]} for key, path in files.items()}
    jobs = [{"mode": "typecheckModules", "modules": modules}] + [
        {"mode": "module", "path": str(path)} for path in files.values()
    ]
    checked, *described = (
        await run_node("tool_approval_defs.mjs", {"mode": "jobs", "jobs": jobs})
    )["results"]
    return Node(dict(zip(files, described, strict=True)), checked["diagnostics"])


@requires_node
@pytest.mark.parametrize("agent", ["assistant", "langgraph", AGENT])
async def test_typescript_compiles_each_file_with_typed_args(node: Node, agent: str):
    """`tsc --strict` (5.9.3) on the file and on a front end using it: `originalArgs` is
    typed by the tool (the `@ts-expect-error` lines fail if it were `any` or `unknown`)."""
    assert node.diagnostics[agent] == []


# --------------------------------------------------------------------------
# The real ChatClient with nothing but the written definitions.
# --------------------------------------------------------------------------


async def chat(
    stack: httpx.AsyncClient, agent: str, tools: list[str], *steps: dict[str, Any]
) -> list[dict[str, Any]]:
    job = {
        "url": f"{str(stack.base_url).rstrip('/')}/agents/{agent}",
        "threadId": f"t-{uuid.uuid4().hex[:12]}",
        "tools": tools,
        "steps": list(steps),
        "timeoutMs": 60000,
    }
    result = await run_node("tool_approval_chat.mjs", job, seconds=180)
    for step in result["steps"]:
        STREAMS.extend(request["events"] for request in step["requests"] if request["events"])
        assert step["stepError"] is None, step["stepError"]
        assert step["error"] is None, step["error"]
        assert step["interruptErrors"] == [], step["interruptErrors"]
    return result["steps"]


def approval(step: dict[str, Any]) -> dict[str, Any]:
    """The step's one interrupt: a typed `tool-approval` item the client can resolve."""
    [item] = step["interrupts"]
    assert (item["kind"], item["canResolve"], item["reason"]) == (
        "tool-approval",
        True,
        "tool_call",
    ), item
    assert item["toolCallId"] == item["wireToolCallId"]
    assert CLIENT_TOOL_MISMATCH_KEY not in item["metadata"]
    return item


def said(step: dict[str, Any]) -> str:
    return "".join(e["delta"] for e in step["events"] if e["type"] == "TEXT_MESSAGE_CONTENT")


@requires_node
async def test_chat_client_gets_the_assistants_approvals_typed(
    stack: httpx.AsyncClient, written: Path, outbox: EffectLog
):
    steps = await chat(
        stack,
        "assistant",
        [f"module:{written / 'assistant.ts'}"],
        {"send": EMAIL},
        {"decide": [{"index": 0, "approve": True, "editedArgs": EDITED}]},
        {"send": "Please reimburse 42.50 usd for team lunch."},
        {"decide": [{"index": 0, "approve": False}]},
        {"send": "Cancel order 42"},
        {"decide": [{"index": 0, "approve": True}]},
    )
    email, sent, expense, refused, order, cancelled = steps
    item = approval(email)
    assert (item["toolName"], item["originalArgs"]) == ("sendEmail", ADA)
    assert "Sent the email to grace@example.com" in said(sent)
    emails = outbox.effects("sendEmail")
    assert [e["args"]["to"] for e in emails if e["key"] == item["toolCallId"]] == [EDITED["to"]]
    item = approval(expense)
    expected = {"amount": 42.5, "currency": "USD", "description": "team lunch"}
    assert (item["toolName"], item["originalArgs"]) == ("submitExpense", expected)
    assert "you rejected it" in said(refused)
    [item] = order["interrupts"]  # the sub-agent's question: generic, as for every client
    assert (item["kind"], item["canResolve"], item["reason"]) == ("generic", True, "tool_call")
    assert item["metadata"]["ag-ui-temporal:subagent"]["toolName"] == "cancelOrder"
    assert "Cancelled order 42" in said(cancelled)


@requires_node
async def test_chat_client_gets_the_graphs_approval_typed(stack: httpx.AsyncClient, written: Path):
    asked, done = await chat(
        stack,
        "langgraph",
        [f"module:{written / 'langgraph.ts'}"],
        {"send": EMAIL},
        {"decide": [{"index": 0, "approve": False}]},
    )
    item = approval(asked)
    assert (item["toolName"], item["originalArgs"]) == (
        "sendEmail",
        {"to": "ada@example.com", "subject": "Hi", "body": "hi"},
    )
    assert done["interrupts"] == []


@requires_node
async def test_chat_client_gets_a_registered_agents_approvals_typed(
    stack: httpx.AsyncClient, written: Path
):
    steps = await chat(
        stack,
        AGENT,
        [f"module:{written / f'{AGENT}.ts'}"],
        {"send": "wire"},
        {"decide": [{"index": 0, "approve": True, "editedArgs": {"amount": 50, "to": "bob"}}]},
        {"send": "refund"},
        {"decide": [{"index": 0, "approve": True}]},
        {"send": "close"},
        {"decide": [{"index": 0, "approve": False, "payload": {"reason": "still in use"}}]},
    )
    wired, wired_done, refund, refund_done, close, close_done = steps
    for step, (name, args) in zip((wired, refund, close), CALLS.values(), strict=True):
        item = approval(step)
        assert (item["toolName"], item["originalArgs"]) == (name, args)
    results = [
        e["content"]
        for step in (wired_done, refund_done, close_done)
        for e in step["events"]
        if e["type"] == "TOOL_CALL_RESULT"
    ]
    assert results == ["wired 50 to bob", "refunded", "you rejected it: still in use"]
    [request] = close_done["requests"]
    [answer] = request["body"]["resume"]
    assert answer["payload"] == {"approved": False, "payload": {"reason": "still in use"}}


# --------------------------------------------------------------------------
# A client whose definition differs: generic items, and the signal.
# --------------------------------------------------------------------------

SENT = {k: v for k, v in SEND_EMAIL.parameters.items() if k != "$schema"}
"""What a client whose `sendEmail` hashes like the server's sends as its `parameters`."""
DIFFERENCES: dict[str, tuple[Any, str | None]] = {
    "the same": (SENT, None),
    "raw JSON Schema, `$schema` kept": (SEND_EMAIL.parameters, None),
    "required reordered": (
        {**SENT, "required": ["subject", "to", "body"]},
        '/required/0: the server\'s is "to", the client\'s "subject"',
    ),
    "a field more": (
        {**SENT, "properties": {**SENT["properties"], "cc": {"type": "string"}}},
        '/properties/cc: only the client\'s schema has it ({"type":"string"})',
    ),
    "open": (
        {k: v for k, v in SENT.items() if k != "additionalProperties"},
        "/additionalProperties: the client's schema has none (the server's: false)",
    ),
    "no inputSchema": ({"type": "object"}, "/additionalProperties: the client's schema has none"
                       " (the server's: false)"),
    "no parameters": (None, "/: the server's is {\"type\":\"object\",\"properties\":{\"to\":"
                        "{\"type\":\"string\",\"forma…, the client's null"),
}  # fmt: skip


@pytest.mark.parametrize(("sent", "expected"), DIFFERENCES.values(), ids=DIFFERENCES)
def test_where_a_sent_schema_differs(sent: Any, expected: str | None):
    envelope = read_approval_response_schema(approval_schema(SEND_EMAIL))
    assert envelope is not None
    assert schema_difference(envelope, sent) == expected


def test_an_agent_without_edits_wants_a_tool_without_input():
    no_edits = read_approval_response_schema(approval_response_schema(None))
    assert no_edits is not None
    assert schema_difference(no_edits, {"type": "object"}) is None
    assert schema_difference(no_edits, {"type": "object", "properties": {}}) is None
    assert schema_difference(no_edits, SENT) == (
        "the agent takes no edits: define the tool without an inputSchema"
    )


@requires_node
async def test_a_differing_definition_is_marked_and_logged_once(
    stack: httpx.AsyncClient,
    written: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
):
    """`sendEmail` as TanStack's guide writes a tool (`z.object`, `z.string().email()`): its
    approvals are generic items, each marked with where its schema differs; one log line
    for the agent and tool, however many runs."""
    monkeypatch.setattr(approval_tools, "_WARNED", set())  # other modules' clients differ too
    caplog.set_level(logging.WARNING, logger=approval_tools.log.name)
    first, answered, second = await chat(
        stack,
        "assistant",
        ["fixture:sendEmailGuide"],
        {"send": EMAIL},
        {"decide": [{"index": 0, "approve": True}]},
        {"send": EMAIL},
    )
    for step in (first, second):
        [item] = step["interrupts"]
        assert (item["kind"], item["canResolve"], item["reason"]) == ("generic", True, "tool_call")
        assert item["toolName"] is None and item["originalArgs"] is None
        note = item["metadata"][CLIENT_TOOL_MISMATCH_KEY]
        assert note["toolName"] == "sendEmail"
        # z.object leaves objects open, where the server's are closed
        assert note["difference"] == (
            "/additionalProperties: the client's schema has none (the server's: false)"
        )
        # what the client would have to match, where the docs say to look
        binding = item["metadata"]["tanstack:interruptBinding"]
        assert binding["kind"] == "tool-approval"
        assert (
            binding["inputSchemaHash"]
            == expected_hashes("assistant")["sendEmail"]["inputSchemaHash"]
        )
    assert "Sent the email to ada@example.com" in said(answered)
    lines = [r.getMessage() for r in caplog.records if r.name == approval_tools.log.name]
    assert lines == [
        "agent assistant: the client's tool sendEmail is not the server's (/additionalProperties:"
        " the client's schema has none (the server's: false)): TanStack AI shows its approvals as"
        " generic items (GET /agents/assistant/tools.ts writes the one that matches)"
    ]


@requires_node
async def test_matching_definitions_are_not_marked(
    stack: httpx.AsyncClient, written: Path, caplog: pytest.LogCaptureFixture
):
    """Neither the written definitions nor the hand-written zod ones of `examples/tools`
    (what zod sends for them is the server's schema) are called different."""
    caplog.set_level(logging.WARNING, logger=approval_tools.log.name)
    clients = ([f"module:{written / 'assistant.ts'}"], ["published:*"])
    for [asked] in await asyncio.gather(
        *(chat(stack, "assistant", tools, {"send": EMAIL}) for tools in clients)
    ):
        approval(asked)
    assert [r for r in caplog.records if r.name == approval_tools.log.name] == []


# --------------------------------------------------------------------------
# Any agent's tools: names, texts and schemas TypeScript must still take.
# --------------------------------------------------------------------------

ODD_AGENT = "odd agent"
ODD = [
    ApprovalTool(
        name="delete",  # a reserved word
        description="Delete it */ at once; `really`.\nSecond line.",
        parameters={
            "type": "object",
            "properties": {
                "kebab-key": {"type": "string", "description": "not an identifier */"},
                "mode": {"enum": ["a", "b", 1, None]},
                "exact": {"const": True},
                "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "both": {"allOf": [{"type": "object"}, {"anyOf": [{"type": "null"}]}]},
                "tags": {"type": "array", "items": {"type": "string", "minLength": 1}},
                "nullable": {"type": ["string", "null"]},
                "open": {"type": "object", "additionalProperties": {"type": "number"}},
                "deep": {"type": "object", "properties": {"a": {"type": "object"}}},
                "anything": {},
                "text": {"type": "string", "description": "Grüße, \u2028 \ud83d\ude00 \ud800"},
            },
            "required": ["kebab-key", "mode"],
        },
        response_schema=approval_response_schema(
            {"type": "object", "properties": {"kebab-key": {"type": "string"}}}
        ),
        asked_by=ODD_AGENT,
    ),
    ApprovalTool(
        name="2 fast",  # neither an identifier nor a name JS allows
        description="",
        parameters={"type": "object", "properties": {}, "additionalProperties": False},
        response_schema=approval_response_schema(None, reject=WHY),
        asked_by=ODD_AGENT,
    ),
    ApprovalTool(
        name="serverSchema",  # one of the module's own names
        description="Approve with a note.",
        parameters={"type": "object"},
        response_schema=approval_response_schema({"type": "object"}, WHY, {"type": "string"}),
        asked_by=ODD_AGENT,
    ),
]


ODD_USAGE = """
import { approvalTools, clientToolsToApprove } from './tools'
export const names: string[] = approvalTools.map((tool) => tool.name)
export const client: readonly string[] = clientToolsToApprove
"""


@requires_node
async def test_any_agents_tools_compile_and_hash_alike(node: Node):
    """Names that are no identifiers (or are taken), comments that would close early, text
    beyond ASCII, every kind of schema the types are written from: the file compiles, and
    each definition hashes like the server's binding."""
    assert node.diagnostics[ODD_AGENT] == []
    described = node.described[ODD_AGENT]
    assert described["approvalTools"] == ["delete", "2 fast", "serverSchema"]
    assert described["clientToolsToApprove"] == ["pick'it"]
    tools = {tool["name"]: tool for tool in described["tools"]}
    for tool in ODD:
        assert {key: tools[tool.name][key] for key in HASHES} == bound_hashes(tool), tool.name
        assert tools[tool.name]["description"] == tool.description
