"""The peer: the same interrupt/resume cycle on LangGraph behind `ag-ui-langgraph`, set up
as a user who tuned it would: one uvicorn process on uvloop + httptools without an access
log, the async SQLite checkpointer in WAL mode with `synchronous=normal`, and a client that
sends its transcript with the resume, as AG-UI clients do (`python -m bench.peer PORT DB`).
With `email` (`python -m bench.peer PORT DB email`) it serves the example graph of `make run`
instead (`bench.graph_agent`, its emails recorded in an outbox next to `DB`): the
LangGraph-on-LangGraph comparison (`bench/graphs.py`).

Where its time goes (py-spy, 2026-12-01): about half of its CPU per resume is
`ag-ui-langgraph`'s `get_schema_keys`, which rebuilds the graph's input and output JSON
schemas (pydantic) on every request; the peer runs the library as shipped."""

from __future__ import annotations

import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp

from bench.client import new_id, post_run
from bench.cycles import transcript
from bench.measure import bounded, measured
from bench.stack import Proc, Stack, free_port, spawn, wait_until

if TYPE_CHECKING:
    from fastapi import FastAPI


def build_app(db: str, graph: str = "approve") -> FastAPI:
    import aiosqlite
    from ag_ui_langgraph import LangGraphAgent, add_langgraph_fastapi_endpoint
    from fastapi import FastAPI
    from langchain_core.messages import AIMessage
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.types import interrupt

    def approve(state: MessagesState) -> dict[str, Any]:
        answer = interrupt({"tool": "sendEmail", "args": {"to": "ada@example.com"}})
        approved = isinstance(answer, dict) and answer.get("approved")
        return {"messages": [AIMessage(content="Sent." if approved else "Not sent.")]}

    builder = StateGraph(MessagesState)
    builder.add_node("approve", approve)
    builder.add_edge(START, "approve")
    builder.add_edge("approve", END)

    state: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        nonlocal builder
        if graph == "email":  # its emails are recorded once per call id in a store of its own
            from bench import graph_agent

            outbox = await graph_agent.peer_outbox(Path(db).with_suffix(".store.sqlite3"))
            builder = graph_agent.peer_graph(outbox)
        async with aiosqlite.connect(db) as conn:
            await conn.execute("PRAGMA journal_mode=wal")
            await conn.execute("PRAGMA synchronous=normal")
            saver = AsyncSqliteSaver(conn)
            await saver.setup()
            compiled = builder.compile(checkpointer=saver)
            agent = LangGraphAgent(name=graph, graph=compiled, emit_interrupt_outcome=True)
            add_langgraph_fastapi_endpoint(app, agent, "/agent")
            state["conn"] = conn
            yield

    app = FastAPI(lifespan=lifespan)

    @app.get("/ready")
    async def ready() -> dict[str, bool]:
        return {"ready": "conn" in state}

    return app


def start(stack: Stack, graph: str = "approve") -> Proc:
    """The peer process serving `graph` (`approve`, or `email`: then named `graph_peer`)."""
    port, name = free_port(), "peer" if graph == "approve" else "graph_peer"
    db = str(stack.workdir / f"{name}.sqlite")
    proc = spawn(
        name,
        [sys.executable, "-m", "bench.peer", str(port), db, graph],
        stack.workdir,
        {"PYTHONPATH": str(stack.src)},
    )
    proc.port = port
    stack.procs[name] = proc
    return proc


async def wait_ready(http: aiohttp.ClientSession, proc: Proc) -> str:
    base = f"http://127.0.0.1:{proc.port}"

    async def up() -> bool:
        async with http.get(f"{base}/ready") as response:
            ready: bool = (await response.json())["ready"]
            return ready

    await wait_until(up, 90, "langgraph peer")
    return f"{base}/agent"


async def resumes(
    http: aiohttp.ClientSession,
    url: str,
    concurrency: int,
    count: int,
    text: str = "send it",
    approved: bool = False,
) -> dict[str, Any]:
    """`count` threads parked on the peer's interrupt (`text` asks), then each resumed with
    `{"approved": approved}`, `concurrency` at a time, the transcript sent along."""

    async def park(thread_id: str) -> tuple[str, str, str, list[dict[str, Any]]]:
        run_id = new_id("run")
        body = {
            "threadId": thread_id,
            "runId": run_id,
            "state": {},
            "tools": [],
            "context": [],
            "forwardedProps": {},
            "messages": [{"id": new_id("m"), "role": "user", "content": text}],
        }
        events, _ = await post_run(http, url, body)
        outcome = events[-1].get("outcome") or {}
        if outcome.get("type") != "interrupt":
            raise RuntimeError(f"peer: no interrupt: {events[-2:]}")
        return thread_id, run_id, outcome["interrupts"][0]["id"], transcript(events)

    threads = [f"peer-{uuid.uuid4().hex[:12]}" for _ in range(count)]
    parked = await bounded(16, [partial(park, t) for t in threads])

    async def one(thread_id: str, parent: str, iid: str, messages: list[dict[str, Any]]) -> float:
        body = {
            "threadId": thread_id,
            "runId": new_id("run"),
            "parentRunId": parent,
            "state": {},
            "tools": [],
            "context": [],
            "forwardedProps": {},
            "messages": messages,
            "resume": [
                {"interruptId": iid, "status": "resolved", "payload": {"approved": approved}}
            ],
        }
        events, seconds = await post_run(http, url, body)
        if (
            events[-1]["type"] != "RUN_FINISHED"
            or (events[-1].get("outcome") or {}).get("type") == "interrupt"
        ):
            raise RuntimeError(f"peer: resume did not finish: {events[-2:]}")
        return seconds

    return await measured(concurrency, [partial(one, *p) for p in parked])


def serve_tuned(app: FastAPI, port: int) -> None:
    """Serve `app` as a user who tuned uvicorn would (every peer process the same way): uvloop,
    httptools, no access log."""
    import uvicorn

    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        loop="uvloop",
        http="httptools",
        access_log=False,
        log_level="warning",
    )


if __name__ == "__main__":
    serve_tuned(build_app(sys.argv[2], *sys.argv[3:4]), int(sys.argv[1]))
