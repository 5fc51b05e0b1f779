"""What an agent's approvals offer, through a real worker and gateway: an agent registered with
`approve_with_edits=False` asks without `editedArgs` and refuses edits (`INVALID_PAYLOAD`,
nothing changes), and a tool's `reject_payload` lets a person say why, which the model hears
("you rejected it: <note>")."""

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

from ag_ui_temporal import ThreadDeps, ask_person, register, registered, thread_capabilities
from ag_ui_temporal.gateway.tanstack import approval_schema_hash, hash_schema_input
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract.tools import NOTE_MAX_CHARS, approval_response_schema
from tests.agui import error, finished, interrupts, resolve, run, thread_state
from tests.conftest import serve_stack

STRICT = "t-no-edits"
"""Registered with `approve_with_edits=False`."""
WIRES: Counter[str] = Counter()
"""Executions of `wire` by tool call id (the tool runs in this process's worker)."""
HEARD: dict[str, str] = {}
"""What the model read as each call's result, by tool call id."""
CALLS = {"wire": {"amount": 100, "to": "bob"}, "purge": {"path": "/srv/old"}}
"""A prompt naming one of these tools gets a call of it with these arguments."""
WHY: dict[str, Any] = {
    "type": "object",
    "properties": {"reason": {"type": "string", "maxLength": 2000}},
    "additionalProperties": False,
}
"""`purge`'s `reject_payload`: a rejection carries an object whose `reason` is optional."""


async def _respond(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    last = messages[-1]
    returns = [part for part in last.parts if isinstance(part, ToolReturnPart)]
    if isinstance(last, ModelRequest) and returns:  # the request after the person answered
        HEARD.update({part.tool_call_id: str(part.content) for part in returns})
        yield "noted"
        return
    prompt = " ".join(str(getattr(part, "content", "")) for part in last.parts)
    name = next((name for name in CALLS if name in prompt), None)
    if name is None:
        yield "Say wire or purge."
        return
    call_id = f"call_{uuid.uuid4().hex}"
    yield {0: DeltaToolCall(name=name, json_args=json.dumps(CALLS[name]), tool_call_id=call_id)}


def build_agent(name: str) -> Agent[ThreadDeps, str]:
    agent = Agent(
        FunctionModel(stream_function=_respond),
        name=name,
        deps_type=ThreadDeps,
        capabilities=thread_capabilities(),
    )

    @agent.tool(requires_approval=True)
    async def wire(ctx: RunContext[ThreadDeps], amount: int, to: str) -> dict[str, Any]:
        WIRES[ctx.tool_call_id or ""] += 1
        return {"sent": amount, "to": to}

    @agent.tool_plain(requires_approval=True, metadata=ask_person(reject_payload=WHY))
    async def purge(path: str) -> str:
        return f"purged {path}"

    return agent


@pytest.fixture(scope="module")
async def http(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[httpx.AsyncClient]:
    if registered(STRICT) is None:
        register(build_agent(STRICT), approve_with_edits=False)
    name = f"approval-options-{uuid.uuid4().hex}"
    settings = Settings(data_dir=data_dir / name, task_queue=name)
    async with serve_stack(client, settings, executor) as http:
        yield http


async def test_an_agent_without_edits_offers_none(http: httpx.AsyncClient, thread_id: str):
    capabilities = (await http.get(f"/agents/{STRICT}/capabilities")).json()
    assert capabilities["humanInTheLoop"]["approveWithEdits"] is False
    [asked] = interrupts(await run(http, thread_id, agent=STRICT, text="wire it"))
    # TanStack's envelope as for a tool without an input schema: closed, no editedArgs
    assert asked["responseSchema"] == approval_response_schema(None)
    approve = asked["responseSchema"]["oneOf"][0]
    assert "editedArgs" not in approve["properties"] and approve["additionalProperties"] is False
    binding = asked["metadata"]["tanstack:interruptBinding"]
    assert (binding["kind"], binding["toolName"]) == ("tool-approval", "wire")
    assert binding["inputSchemaHash"] == hash_schema_input(None)


async def test_edits_are_refused_and_change_nothing(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    [asked] = interrupts(await run(http, thread_id, agent=STRICT, text="wire it"))
    before = await thread_state(client, thread_id)
    edits = {"approved": True, "editedArgs": {"amount": 7, "to": "eve"}}
    refused = error(await run(http, thread_id, agent=STRICT, resume=[resolve(asked, edits)]))
    assert refused["code"] == "INVALID_PAYLOAD"
    assert await thread_state(client, thread_id) == before
    assert WIRES[asked["toolCallId"]] == 0

    done = await run(http, thread_id, agent=STRICT, resume=[resolve(asked, {"approved": True})])
    assert finished(done)["outcome"] == {"type": "success"}
    assert json.loads(done[1]["content"]) == {"sent": 100, "to": "bob"}  # the model's args
    assert WIRES[asked["toolCallId"]] == 1


async def test_a_rejections_note_is_what_the_model_hears(http: httpx.AsyncClient, thread_id: str):
    [asked] = interrupts(await run(http, thread_id, agent=STRICT, text="purge it"))
    assert asked["responseSchema"] == approval_response_schema(None, reject=WHY)
    binding = asked["metadata"]["tanstack:interruptBinding"]
    assert binding["approvalSchemaHash"] == approval_schema_hash(None, WHY)
    # TanStack's rule: a branch with a schema requires its payload
    bare = error(
        await run(http, thread_id, agent=STRICT, resume=[resolve(asked, {"approved": False})])
    )
    assert bare["code"] == "INVALID_PAYLOAD"

    note = {"approved": False, "payload": {"reason": "  it still holds\nlast year's\taudit  "}}
    done = await run(http, thread_id, agent=STRICT, resume=[resolve(asked, note)])
    assert finished(done)["outcome"] == {"type": "success"}
    heard = "you rejected it: it still holds last year's audit"
    assert HEARD[asked["toolCallId"]] == heard  # the model's next request: one line
    assert (done[1]["type"], done[1]["content"]) == ("TOOL_CALL_RESULT", heard)


async def test_a_rejection_without_a_note_and_a_long_one(http: httpx.AsyncClient, thread_id: str):
    [asked] = interrupts(await run(http, thread_id, agent=STRICT, text="purge it"))
    silent = {"approved": False, "payload": {}}
    await run(http, thread_id, agent=STRICT, resume=[resolve(asked, silent)])
    assert HEARD[asked["toolCallId"]] == "you rejected it"

    [asked] = interrupts(await run(http, thread_id, agent=STRICT, text="purge it again"))
    long = {"approved": False, "payload": {"reason": "no " * 600}}
    await run(http, thread_id, agent=STRICT, resume=[resolve(asked, long)])
    heard = HEARD[asked["toolCallId"]]
    assert heard.startswith("you rejected it: no no") and heard.endswith("…")
    assert len(heard) == len("you rejected it: ") + NOTE_MAX_CHARS
