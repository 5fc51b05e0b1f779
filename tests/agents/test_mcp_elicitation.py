"""An MCP server's question to the user (`elicitation/create`) as an `input_required`
interrupt: a real MCP server process (the official `mcp` SDK, streamable HTTP,
`ag_ui_temporal/examples/agents/booking_mcp.py`), a `FunctionModel` agent with
`mcp_server(...)` among its toolsets, the real gateway and Temporal. The person's answer
(accept, decline, cancel) reaches the server, also when the worker that asked is gone
before the answer."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from temporalio.client import Client

from ag_ui_temporal.agents import ThreadDeps, mcp_server, register, registered, thread_capabilities
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.worker import build_worker
from ag_ui_temporal.workflows.contract import InterruptStatus
from tests.agents.test_thread_agents import _last_returns, _prompt
from tests.agui import cancel, error, finished, interrupts, resolve, run, texts, types
from tests.conftest import serve_gateway
from tests.test_producers import until
from tests.test_restarts import start_stack

SERVER = Path(__file__).parents[2] / "ag_ui_temporal" / "examples" / "agents" / "booking_mcp.py"
AGENT = "t-booking"
WHEN = "When and for how many at {}?"
WHEN_FIELDS = {"date", "party_size"}


@dataclass
class McpServer:
    url: str
    log: Path

    def heard(self, restaurant: str) -> list[dict[str, Any]]:
        """What the server's tool received for this restaurant, in order."""
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return [e for e in map(json.loads, lines) if e["restaurant"] == restaurant]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def booking(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpServer]:
    """The example MCP server in a process of its own, over streamable HTTP."""
    log = tmp_path_factory.mktemp("mcp") / "heard.jsonl"
    port = _free_port()
    args = [sys.executable, str(SERVER), "--http", str(port), "--log", str(log)]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_until_listening(port, process)
        yield McpServer(f"http://127.0.0.1:{port}/mcp", log)
    finally:
        process.terminate()
        process.wait(timeout=10)


def _wait_until_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    for _ in range(600):  # the process imports the SDK first
        assert process.poll() is None, "the MCP server exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            try:  # a short wait for the process between attempts
                process.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                pass
    raise AssertionError("the MCP server never listened")


async def _book(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    if returns := _last_returns(messages):
        yield "results: " + json.dumps({p.tool_name: p.content for p in returns}, default=str)
        return
    restaurant = _prompt(messages).removeprefix("book a table at ")
    args = json.dumps({"restaurant": restaurant})
    call_id = f"call_{uuid.uuid4().hex}"
    yield {0: DeltaToolCall(name="book_table", json_args=args, tool_call_id=call_id)}


def _register(url: str) -> None:
    if registered(AGENT) is None:
        agent = Agent(
            FunctionModel(stream_function=_book),
            name=AGENT,
            deps_type=ThreadDeps,
            capabilities=thread_capabilities(),
            toolsets=[mcp_server(url, id="booking")],
        )
        register(agent)


@pytest.fixture(scope="module")
async def http(
    booking: McpServer, client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[httpx.AsyncClient]:
    _register(booking.url)
    name = f"mcp-{uuid.uuid4().hex}"
    settings = Settings(data_dir=data_dir / name, task_queue=name)
    async with (
        build_worker(client, settings, executor),
        serve_gateway(settings, client) as url,
        httpx.AsyncClient(base_url=url, timeout=60) as http,
    ):
        yield http


def _restaurant() -> str:
    return f"Chez {uuid.uuid4().hex[:6]}"


def _the_question(events: list[dict[str, Any]], message: str) -> dict[str, Any]:
    """The run's one interrupt: the server's question, its schema (or `false`: decline)."""
    assert finished(events)["outcome"]["type"] == "interrupt"
    [asked] = interrupts(events)
    assert asked["reason"] == "input_required"
    assert asked["message"] == message
    requested, decline = asked["responseSchema"]["anyOf"]
    assert decline == {"const": False, "title": "Decline"}
    shown = asked["metadata"]["mcp:elicitation"]
    assert shown["server"] == "booking" and shown["tool"] == "book_table"
    assert shown["requestedSchema"] == requested
    return asked


async def test_accepted_answers_reach_the_server_across_a_worker_restart(
    booking: McpServer,
    client: Client,
    data_dir: Path,
    executor: ThreadPoolExecutor,
    thread_id: str,
    own_store: SecretStr,
):
    _register(booking.url)
    name = f"mcp-restart-{uuid.uuid4().hex}"
    settings = Settings(data_dir=data_dir / name, task_queue=name, database_url=own_store)
    where = _restaurant()
    async with AsyncExitStack() as first:
        http = await start_stack(first, client, settings, executor)
        asked = await run(http, thread_id, agent=AGENT, text=f"book a table at {where}")
        when = _the_question(asked, WHEN.format(where))
        requested = when["responseSchema"]["anyOf"][0]
        assert set(requested["properties"]) == WHEN_FIELDS
        assert requested["properties"]["date"]["format"] == "date"
        assert types(asked)[1:4] == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"]
    assert booking.heard(where) == []  # the tool did not run on: it waits for the person

    # The worker and gateway that asked are gone; new ones carry the answers to the server.
    async with AsyncExitStack() as second:
        http = await start_stack(second, client, settings, executor)
        answer = {"date": "2026-12-24", "party_size": 4}
        then = await run(http, thread_id, agent=AGENT, resume=[resolve(when, answer)])
        named = _the_question(then, "Under which name?")
        assert named["toolCallId"] == when["toolCallId"]
        done = await run(http, thread_id, agent=AGENT, resume=[resolve(named, {"name": "Ada"})])

    booked = f"Booked a table at {where} on 2026-12-24 for 4 under Ada."
    assert types(done)[:2] == ["RUN_STARTED", "TOOL_CALL_RESULT"]
    assert done[1]["toolCallId"] == when["toolCallId"] and done[1]["content"] == booked
    assert booked in texts(done)
    assert finished(done)["outcome"] == {"type": "success"}
    assert booking.heard(where) == [
        {"restaurant": where, "question": "booking", "action": "accept", "content": answer},
        {"restaurant": where, "question": "name", "action": "accept", "content": {"name": "Ada"}},
    ]


async def test_a_declined_question(http: httpx.AsyncClient, booking: McpServer, thread_id: str):
    """The person says no (the payload `false`): the server hears `decline`."""
    where = _restaurant()
    when = _the_question(
        await run(http, thread_id, agent=AGENT, text=f"book a table at {where}"),
        WHEN.format(where),
    )
    done = await run(http, thread_id, agent=AGENT, resume=[resolve(when, False)])
    said = f"No table booked at {where}: the user chose to decline."
    assert done[1]["content"] == said and finished(done)["outcome"] == {"type": "success"}
    assert [(e["question"], e["action"]) for e in booking.heard(where)] == [("booking", "decline")]


async def test_a_cancelled_question(http: httpx.AsyncClient, booking: McpServer, thread_id: str):
    """The person dismisses it (an AG-UI `cancelled`): the server hears `cancel`."""
    where = _restaurant()
    when = _the_question(
        await run(http, thread_id, agent=AGENT, text=f"book a table at {where}"),
        WHEN.format(where),
    )
    done = await run(http, thread_id, agent=AGENT, resume=[cancel(when)])
    said = f"No table booked at {where}: the user chose to cancel."
    assert done[1]["content"] == said and finished(done)["outcome"] == {"type": "success"}
    assert [(e["question"], e["action"]) for e in booking.heard(where)] == [("booking", "cancel")]


async def test_an_answer_outside_the_schema_is_refused(
    http: httpx.AsyncClient, booking: McpServer, thread_id: str
):
    """Rule 6: an answer that fits neither the server's schema nor `false` is refused and
    never reaches the server; a fitting one afterwards does."""
    where = _restaurant()
    when = _the_question(
        await run(http, thread_id, agent=AGENT, text=f"book a table at {where}"),
        WHEN.format(where),
    )
    for wrong in (
        {"date": "next Tuesday", "party_size": 2},  # not a date
        {"date": "2026-12-24", "party_size": 40},  # over the server's maximum
        {"date": "2026-12-24"},  # party_size is required
        True,  # only `false` declines
    ):
        refused = await run(http, thread_id, agent=AGENT, resume=[resolve(when, wrong)])
        assert error(refused)["code"] == "INVALID_PAYLOAD", wrong
    assert booking.heard(where) == []
    fits = {"date": "2026-12-31", "party_size": 2}
    then = await run(http, thread_id, agent=AGENT, resume=[resolve(when, fits)])
    _the_question(then, "Under which name?")
    assert booking.heard(where) == []  # the tool's body runs once, after the last answer


async def test_the_example_agent_over_stdio(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor, thread_id: str
):
    """`examples.agents.booking`, loaded through `AGENT_MODULES` as a user loads theirs: its
    MCP server is a stdio process per session, and both answers reach it."""
    name = f"booking-{uuid.uuid4().hex}"
    settings = Settings(
        data_dir=data_dir / name,
        task_queue=name,
        agent_modules=["ag_ui_temporal.examples.agents.booking"],
    )
    async with AsyncExitStack() as stack:
        http = await start_stack(stack, client, settings, executor)
        asked = await run(http, thread_id, agent="booking", text="Book a table at Luigi's")
        when = _the_question(asked, WHEN.format("Luigi's"))
        answer = {"date": "2027-01-02", "party_size": 2}
        named = _the_question(
            await run(http, thread_id, agent="booking", resume=[resolve(when, answer)]),
            "Under which name?",
        )
        done = await run(http, thread_id, agent="booking", resume=[resolve(named, {"name": "Bo"})])
    booked = "Booked a table at Luigi's on 2027-01-02 for 2 under Bo."
    assert done[1]["content"] == booked and texts(done) == booked


async def test_an_expired_question_is_the_calls_result(
    booking: McpServer, client: Client, data_dir: Path, executor: ThreadPoolExecutor, thread_id: str
):
    """Nobody answers before `INPUT_EXPIRES_IN`: the server hears nothing more, and the
    call's result (for the model's next turn) says why."""
    _register(booking.url)
    name = f"mcp-expiry-{uuid.uuid4().hex}"
    settings = Settings(
        data_dir=data_dir / name, task_queue=name, input_expires_in=timedelta(seconds=1)
    )
    where = _restaurant()
    async with AsyncExitStack() as stack:
        http = await start_stack(stack, client, settings, executor)
        asked = await run(http, thread_id, agent=AGENT, text=f"book a table at {where}")
        when = _the_question(asked, WHEN.format(where))
        assert when["expiresAt"]
        state = await until(
            client, thread_id, lambda s: any(m.get("role") == "tool" for m in s.messages)
        )
    [result] = [m for m in state.messages if m.get("role") == "tool"]
    assert result["toolCallId"] == when["toolCallId"]
    assert result["content"] == "nobody answered before it expired"
    assert [i.status for i in state.interrupts] == [InterruptStatus.EXPIRED]
    assert booking.heard(where) == []
