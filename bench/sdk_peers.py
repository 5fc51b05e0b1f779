"""The framework comparisons (`make bench`'s `openai` and `adk` phases, counted by
`bench/graphs.py`): a framework's example of `make run` served here, against the same agent on
the framework's own in-process host, a peer process serving AG-UI at `/agent`.

Each framework's module (`bench.openai_agent`, `bench.adk_agent`) goes in `AGENT_MODULES`,
where importing it registers the example again on its instant model (ours), and is the peer
(`python -m MODULE PORT DB`, its emails in an outbox of its own in `DB`), answering AG-UI
with `agent_route`. This module imports neither aiohttp nor the frameworks: the test venv,
without the bench extra, tests the peers.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import Request  # a runtime name: FastAPI reads the handler's annotation

if TYPE_CHECKING:
    import aiohttp
    from fastapi import FastAPI

    from bench.stack import Proc, Stack

Answer = Callable[[str, dict[str, Any]], Awaitable[tuple[str, list[str]]]]
"""A framework peer's run (`agent_route`): (thread, the run's body) -> (said, interrupt ids)."""


@dataclass(frozen=True)
class SdkPeer:
    module: str
    agent: str
    """The example's name: ours serves it at `/agents/{agent}`."""
    title: str
    labels: dict[str, str]
    """`bench.graphs.print_graphs`'s, by side."""

    @property
    def process(self) -> str:
        """The peer's process name, whose CPU is the peer's (`bench.graphs.processes`)."""
        return f"{self.agent}_peer"


PEERS = {
    "openai": SdkPeer(
        "bench.openai_agent",
        "openai",
        "The OpenAI Agents SDK's example here and in one process",
        {
            "ours": "ag-ui-temporal (register_openai_agent)",
            "peer": "the SDK's Runner in one process (RunState in memory)",
        },
    ),
    "adk": SdkPeer(
        "bench.adk_agent",
        "adk",
        "The Google ADK example here and in one process",
        {
            "ours": "ag-ui-temporal (register_adk_agent)",
            "peer": "ADK's Runner in one process (SqliteSessionService)",
        },
    ),
}
"""By phase."""


def start(stack: Stack, peer: SdkPeer) -> Proc:
    """The peer's process; `warm_up` gives its URL."""
    from bench.stack import free_port, spawn

    port = free_port()
    db = str(stack.workdir / f"{peer.process}.store.sqlite3")
    command = [sys.executable, "-m", peer.module, str(port), db]
    proc = spawn(peer.process, command, stack.workdir, {"PYTHONPATH": str(stack.src)})
    proc.port = port
    stack.procs[peer.process] = proc
    return proc


async def warm_up(http: aiohttp.ClientSession, stack: Stack, peer: SdkPeer, proc: Proc) -> str:
    """The peer's URL once it serves, both sides warmed up (imports, the sandbox,
    connections) by a few declines and approvals."""
    from bench import peer as peers
    from bench.cycles import EMAIL, gateway_resumes

    url = await peers.wait_ready(http, proc)
    for approved in (False, True):
        await gateway_resumes(http, ours_url(stack, peer), 1, 4, approved=approved)
        await peers.resumes(http, url, 1, 4, EMAIL, approved)
    return url


def ours_url(stack: Stack, peer: SdkPeer) -> str:
    return f"{stack.gateway_url}/agents/{peer.agent}"


def agent_route(app: FastAPI, answer: Answer) -> None:
    """`POST /agent` of a framework peer (`bench.openai_agent`'s, `bench.adk_agent`'s):
    `answer(thread, body)` runs the agent and gives what it said and the ids of the interrupts
    it asks; they go as one message, then `RUN_FINISHED`, in one SSE body (these peers stream
    nothing while the model speaks)."""
    from fastapi.responses import StreamingResponse

    @app.post("/agent")
    async def run(request: Request) -> StreamingResponse:
        body = await request.json()
        thread, run_id = body["threadId"], body["runId"]
        text, interrupts = await answer(thread, body)
        finished: dict[str, Any] = {"type": "RUN_FINISHED", "threadId": thread, "runId": run_id}
        if interrupts:
            asked = [{"id": i} for i in interrupts]
            finished["outcome"] = {"type": "interrupt", "interrupts": asked}
        else:
            finished["outcome"] = {"type": "success"}
        events: list[dict[str, Any]] = [
            {"type": "RUN_STARTED", "threadId": thread, "runId": run_id}
        ]
        if text:
            message = f"msg-{uuid.uuid4().hex[:12]}"
            events += [
                {"type": "TEXT_MESSAGE_START", "messageId": message, "role": "assistant"},
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": message, "delta": text},
                {"type": "TEXT_MESSAGE_END", "messageId": message},
            ]
        lines = "".join(f"data: {json.dumps(event)}\n\n" for event in [*events, finished])
        return StreamingResponse(iter([lines]), media_type="text/event-stream")
