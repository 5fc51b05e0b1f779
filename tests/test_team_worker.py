"""A team's own agents and activities, and nothing of the demo.

- `ag-ui-temporal worker` and `ag-ui-temporal gateway`, as processes, with `AGENT_MODULES`
  naming one module of the team's (one agent, one activity registered beside it): `/agents`
  lists that agent and the library's `inbox`, nothing else (no demo `assistant`), and the
  agent's tool approval runs the team's activity once, whatever is sent again.
- A team's own `Worker` on a plain `Client.connect(...)`, with `ThreadWorkerPlugin` and its
  activity given to the plugin: a thread on it asks, is approved, and acts once.
- The plugin refuses a worker on another queue than the threads'.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import textwrap
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.worker import Worker

from ag_ui_temporal import (
    IN_WORKFLOW,
    Outbox,
    ThreadDeps,
    ThreadWorkerPlugin,
    ToolCallInput,
    ToolCallOutput,
    register,
    registered,
    thread_capabilities,
)
from ag_ui_temporal.settings import Settings, sqlite_url
from ag_ui_temporal.store import open_engine
from ag_ui_temporal.store.migrate import upgrade
from tests.agui import finished, interrupts, resolve, run, texts
from tests.conftest import free_port, serve_gateway
from tests.effects import EffectLog

BIN = Path(sys.executable).parent
UP_WITHIN = 180.0
"""Seconds a process of the stack may take to answer its readiness probe on this machine: a
bound on a wait that must end, not a timed assertion."""

TEAM_AGENTS = '''
"""The team's agents: `desk` books rooms, a person approving each booking first; the booking
is the team's `bookRoom` activity, registered beside the agent, once per tool call."""

import json
import os
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelRequest, ToolReturnPart
from pydantic_ai.models.function import DeltaToolCall, FunctionModel
from temporalio import activity, workflow

from ag_ui_temporal import (
    IN_WORKFLOW,
    Outbox,
    ThreadDeps,
    ToolCallInput,
    ToolCallOutput,
    WorkerResources,
    register,
    register_activities,
    thread_capabilities,
)


async def model(messages, info):
    last = messages[-1]
    returns = [p for p in last.parts if isinstance(p, ToolReturnPart)]
    if isinstance(last, ModelRequest) and returns:
        yield "Booked: " + json.dumps(returns[0].content)
        return
    args, call_id = json.dumps({"room": "blue"}), f"call_{uuid.uuid4().hex}"
    yield {0: DeltaToolCall(name="book_room", json_args=args, tool_call_id=call_id)}


desk = Agent(
    FunctionModel(stream_function=model),
    name="desk",
    deps_type=ThreadDeps,
    capabilities=thread_capabilities(),
)


@desk.tool(requires_approval=True, metadata=IN_WORKFLOW)
async def book_room(ctx: RunContext[ThreadDeps], room: str) -> Any:
    """Book `room`."""
    call = ToolCallInput(key=ctx.tool_call_id or "", tool="bookRoom", args={"room": room})
    output = await workflow.execute_activity(
        "bookRoom", call, result_type=ToolCallOutput, start_to_close_timeout=timedelta(seconds=30)
    )
    return output.result


class Rooms:
    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox

    @activity.defn(name="bookRoom")
    async def book_room(self, call: ToolCallInput) -> ToolCallOutput:
        with (Path(os.environ["DATA_DIR"]) / "bookings.log").open("a") as log:
            log.write(call.key + "\\n")  # each time it runs: the test counts them
        stored = await self.outbox.record(call.key, call.tool, call.args, {"booked": True})
        return ToolCallOutput(result=stored.result, first_time=stored.first_time)


@register_activities
def rooms(worker: WorkerResources) -> list[Any]:
    return [Rooms(Outbox(worker.store)).book_room]


register(desk, description="The team's desk: books rooms.")
'''


@dataclass
class TeamStack:
    http: httpx.AsyncClient
    effects: EffectLog
    data_dir: Path

    def bookings(self) -> list[str]:
        """The keys the team's `bookRoom` ran for, each time it ran."""
        log = self.data_dir / "bookings.log"
        return log.read_text().split() if log.exists() else []


async def until_ready(url: str, process: asyncio.subprocess.Process, log: Path) -> None:
    """`url` answers 200, or a failure quoting the process's output if it ends first."""
    async with httpx.AsyncClient(timeout=5) as http, asyncio.timeout(UP_WITHIN):
        while process.returncode is None:
            try:
                if (await http.get(url)).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
    raise AssertionError(f"exited {process.returncode} before {url} was ready:\n{log.read_text()}")


@pytest.fixture(scope="module")
async def team(
    client: Client, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[TeamStack]:
    """The CLI's worker and gateway, with the team's module on their path and in
    `AGENT_MODULES`, on a store of their own."""
    root = tmp_path_factory.mktemp("team")
    (root / "team_agents.py").write_text(textwrap.dedent(TEAM_AGENTS).lstrip())
    store = sqlite_url(root / "store.sqlite3")
    await upgrade(store)
    gateway_port, health_port = free_port(), free_port()
    path = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH")) if p)
    env = {
        **os.environ,
        "PYTHONPATH": path,
        "AGENT_MODULES": json.dumps(["team_agents"]),
        "TEMPORAL_ADDRESS": client.service_client.config.target_host,
        "TASK_QUEUE": f"team-{uuid.uuid4().hex[:8]}",
        "DATA_DIR": str(root),
        "DATABASE_URL": store,
        "GATEWAY_PORT": str(gateway_port),
        "WORKER_HEALTH_PORT": str(health_port),
    }
    logs = {role: root / f"{role}.log" for role in ("worker", "gateway")}
    processes = []
    for role, log in logs.items():
        with log.open("wb") as output:  # a file: a pipe nobody reads would fill and block it
            processes.append(
                await asyncio.create_subprocess_exec(
                    str(BIN / "ag-ui-temporal"),
                    role,
                    env=env,
                    cwd=root,
                    stdout=output,
                    stderr=asyncio.subprocess.STDOUT,
                )
            )
    worker, gateway = processes
    url = f"http://127.0.0.1:{gateway_port}"
    try:
        await until_ready(f"http://127.0.0.1:{health_port}/readyz", worker, logs["worker"])
        await until_ready(f"{url}/readyz", gateway, logs["gateway"])
        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            yield TeamStack(http, EffectLog(store), root)
    finally:
        for process in processes:
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                await asyncio.wait_for(process.wait(), 60)
            except TimeoutError:
                process.kill()
                await process.wait()


async def test_the_gateway_lists_the_teams_agent_and_the_inbox_alone(team: TeamStack):
    listed = (await team.http.get("/agents")).json()
    assert sorted(agent["name"] for agent in listed) == ["desk", "inbox"]
    assert (await team.http.get("/agents/assistant/capabilities")).status_code == 404


async def test_the_teams_approval_runs_its_activity_once(team: TeamStack, thread_id: str):
    [asked] = interrupts(await run(team.http, thread_id, agent="desk", text="a room, please"))
    assert asked["reason"] == "tool_call"
    assert team.bookings() == []  # nothing before the person says yes
    approve = [resolve(asked, {"approved": True})]
    done = await run(team.http, thread_id, agent="desk", resume=approve)
    assert finished(done)["outcome"] == {"type": "success"}
    assert texts(done) == 'Booked: {"booked": true}'
    again = await run(team.http, thread_id, agent="desk", resume=approve)  # sent once more
    assert finished(again)["outcome"] == {"type": "success"}
    assert team.bookings() == [asked["toolCallId"]]  # it ran once
    [booked] = team.effects.effects("bookRoom")
    assert (booked["key"], booked["args"]) == (asked["toolCallId"], {"room": "blue"})


# -- a team's own worker, its client a plain one ---------------------------------------------

AGENT = "t-team-desk"
BOOKINGS: list[str] = []
"""The keys `teamBookRoom` ran for, each time it ran (in this process's worker)."""


async def _stream(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    last = messages[-1]
    if isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts):
        yield "Booked."
        return
    call_id = f"call_{uuid.uuid4().hex}"
    yield {0: DeltaToolCall(name="book", json_args='{"room": "red"}', tool_call_id=call_id)}


class Rooms:
    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox

    @activity.defn(name="teamBookRoom")
    async def book(self, call: ToolCallInput) -> ToolCallOutput:
        BOOKINGS.append(call.key)
        stored = await self.outbox.record(call.key, call.tool, call.args, {"booked": True})
        return ToolCallOutput(result=stored.result, first_time=stored.first_time)


def _desk() -> Agent[ThreadDeps, str]:
    agent = Agent(
        FunctionModel(stream_function=_stream),
        name=AGENT,
        deps_type=ThreadDeps,
        capabilities=thread_capabilities(),
    )

    @agent.tool(requires_approval=True, metadata=IN_WORKFLOW)
    async def book(ctx: RunContext[ThreadDeps], room: str) -> Any:
        call = ToolCallInput(key=ctx.tool_call_id or "", tool="book", args={"room": room})
        output = await workflow.execute_activity(
            "teamBookRoom", call, result_type=ToolCallOutput,
            start_to_close_timeout=timedelta(seconds=30),
        )  # fmt: skip
        return output.result

    return agent


async def test_a_teams_own_worker_on_a_plain_client(client: Client, data_dir: Path, thread_id: str):
    if registered(AGENT) is None:
        register(_desk())
    name = f"team-own-{uuid.uuid4().hex[:8]}"
    settings = Settings(data_dir=data_dir / name, task_queue=name)
    engine = open_engine(settings.store_url)
    plain = await Client.connect(client.service_client.config.target_host)  # no converter
    plugin = ThreadWorkerPlugin(settings, activities=[Rooms(Outbox(engine)).book])
    try:
        async with (
            Worker(plain, task_queue=settings.task_queue, plugins=[plugin]),
            serve_gateway(settings, client) as url,
            httpx.AsyncClient(base_url=url, timeout=60) as http,
        ):
            [asked] = interrupts(await run(http, thread_id, agent=AGENT, text="a room"))
            assert BOOKINGS == []
            approve = [resolve(asked, {"approved": True})]
            done = await run(http, thread_id, agent=AGENT, resume=approve)
            assert texts(done) == "Booked."
            again = await run(http, thread_id, agent=AGENT, resume=approve)  # sent once more
            assert finished(again)["outcome"] == {"type": "success"}
            assert BOOKINGS == [asked["toolCallId"]]
    finally:
        await engine.dispose()


async def test_the_plugin_refuses_another_queue_than_the_threads(client: Client):
    settings = Settings(task_queue="the-threads")
    with pytest.raises(ValueError, match="'the-threads'"):
        Worker(client, task_queue="my-orders", plugins=[ThreadWorkerPlugin(settings)])
