"""The peer: the same interrupt/resume cycle on LangGraph (SQLite checkpointer, WAL)
behind `ag-ui-langgraph`, one uvicorn process (`python -m bench.peer PORT DB`)."""

from __future__ import annotations

import sys
import uuid
from functools import partial
from typing import TYPE_CHECKING, Any

import aiohttp

from bench.client import new_id, post_run
from bench.measure import bounded, measured
from bench.stack import Proc, Stack, free_port, spawn, wait_until

if TYPE_CHECKING:
    from fastapi import FastAPI


def build_app(db: str) -> FastAPI:
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

    app = FastAPI()
    state: dict[str, Any] = {}

    @app.on_event("startup")
    async def startup() -> None:
        conn = await aiosqlite.connect(db)
        await conn.execute("PRAGMA journal_mode=wal")
        await conn.execute("PRAGMA synchronous=normal")
        saver = AsyncSqliteSaver(conn)
        await saver.setup()
        graph = builder.compile(checkpointer=saver)
        agent = LangGraphAgent(name="approve", graph=graph, emit_interrupt_outcome=True)
        add_langgraph_fastapi_endpoint(app, agent, "/agent")
        state["conn"] = conn

    @app.get("/ready")
    async def ready() -> dict[str, bool]:
        return {"ready": "conn" in state}

    return app


def start(stack: Stack) -> Proc:
    port = free_port()
    proc = spawn(
        "peer",
        [sys.executable, "-m", "bench.peer", str(port), str(stack.workdir / "langgraph.sqlite")],
        stack.workdir,
        {"PYTHONPATH": str(stack.src)},
    )
    proc.port = port
    stack.procs["peer"] = proc
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
    http: aiohttp.ClientSession, url: str, concurrency: int, count: int
) -> dict[str, Any]:

    async def park(thread_id: str) -> tuple[str, str, str]:
        run_id = new_id("run")
        body = {
            "threadId": thread_id,
            "runId": run_id,
            "state": {},
            "tools": [],
            "context": [],
            "forwardedProps": {},
            "messages": [{"id": new_id("m"), "role": "user", "content": "send it"}],
        }
        events, _ = await post_run(http, url, body)
        outcome = events[-1].get("outcome") or {}
        if outcome.get("type") != "interrupt":
            raise RuntimeError(f"peer: no interrupt: {events[-2:]}")
        return thread_id, run_id, outcome["interrupts"][0]["id"]

    threads = [f"peer-{uuid.uuid4().hex[:12]}" for _ in range(count)]
    parked = await bounded(16, [partial(park, t) for t in threads])

    async def one(thread_id: str, parent: str, iid: str) -> float:
        body = {
            "threadId": thread_id,
            "runId": new_id("run"),
            "parentRunId": parent,
            "state": {},
            "tools": [],
            "context": [],
            "forwardedProps": {},
            "messages": [],
            "resume": [{"interruptId": iid, "status": "resolved", "payload": {"approved": False}}],
        }
        events, seconds = await post_run(http, url, body)
        if (
            events[-1]["type"] != "RUN_FINISHED"
            or (events[-1].get("outcome") or {}).get("type") == "interrupt"
        ):
            raise RuntimeError(f"peer: resume did not finish: {events[-2:]}")
        return seconds

    return await measured(concurrency, [partial(one, *p) for p in parked])


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(
        build_app(sys.argv[2]), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning"
    )
