"""One approval cycle, as a client drives it: a run that parks on a sendEmail approval, then
its resume (decline or approve); and the same resume sent past the gateway, and the floors'."""

from __future__ import annotations

import asyncio
import time
from functools import partial
from typing import Any

import aiohttp
from temporalio.client import Client, WorkflowHandle

from bench.client import new_id, post_run
from bench.floor import DECLINE, TASK_QUEUE, WORKFLOW
from bench.measure import bounded, measured

EMAIL = "Send an email to ada@example.com saying hi"

Parked = tuple[str, str, str, list[dict[str, Any]]]
"""A thread parked on its interrupt: (thread id, run id, interrupt id, the transcript the
client holds: the run's last `MESSAGES_SNAPSHOT`, which a client sends back with its resume)."""


def transcript(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    snapshots = [e["messages"] for e in events if e.get("type") == "MESSAGES_SNAPSHOT"]
    return list(snapshots[-1]) if snapshots else []


async def park(
    http: aiohttp.ClientSession,
    url: str,
    thread_id: str,
    earlier: list[dict[str, Any]] | None = None,
) -> Parked:
    """A run that ends in a sendEmail approval (after the `earlier` messages, if any)."""
    run_id = new_id("run")
    ask = {"id": new_id("m"), "role": "user", "content": EMAIL}
    body = {"threadId": thread_id, "runId": run_id, "messages": [*(earlier or []), ask]}
    for _ in range(3):  # the same run id again re-attaches: safe to retry
        events, _ = await post_run(http, url, body)
        if events[-1].get("code") != "UNAVAILABLE":
            break
        await asyncio.sleep(1)
    outcome = events[-1].get("outcome") or {}
    if outcome.get("type") != "interrupt":
        raise RuntimeError(f"no interrupt: {events[-1]}")
    return thread_id, run_id, outcome["interrupts"][0]["id"], transcript(events)


def resume_body(
    thread_id: str,
    parent: str,
    interrupt_id: str,
    approved: bool,
    messages: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "threadId": thread_id,
        "runId": new_id("run"),
        "parentRunId": parent,
        "messages": messages or [],
        "resume": [
            {"interruptId": interrupt_id, "status": "resolved", "payload": {"approved": approved}}
        ],
    }


async def park_many(
    http: aiohttp.ClientSession, url: str, count: int, lanes: int = 16
) -> list[Parked]:
    threads = [new_id("bench") for _ in range(count)]
    return await bounded(lanes, [partial(park, http, url, t) for t in threads])


async def gateway_resumes(
    http: aiohttp.ClientSession,
    url: str,
    concurrency: int,
    count: int,
    approved: bool = False,
    timings: list[tuple[str, float]] | None = None,
) -> dict[str, Any]:
    """Resume POST → `RUN_FINISHED` read by the client, the transcript sent along."""
    parked = await park_many(http, url, count)
    errors: list[str] = []

    async def one(t: str, parent: str, iid: str, messages: list[dict[str, Any]]) -> float | None:
        body = resume_body(t, parent, iid, approved, messages)
        events, seconds = await post_run(http, url, body, timings)
        if events[-1]["type"] != "RUN_FINISHED":
            errors.append(str(events[-1].get("code")))
            return None
        return seconds

    out = await measured(concurrency, [partial(one, *p) for p in parked])
    if errors:
        out["errors"] = errors
        print(f"  resume errors: {errors}", flush=True)
    return out


async def floor_handles(client: Client, count: int) -> list[WorkflowHandle[Any, Any]]:
    """`count` floor workflows, parked: their first workflow task has run, as a thread's has."""

    async def start() -> WorkflowHandle[Any, Any]:
        return await client.start_workflow(WORKFLOW, id=new_id("floor"), task_queue=TASK_QUEUE)

    handles = await bounded(16, [start for _ in range(count)])
    await bounded(16, [partial(h.query, "ready") for h in handles])
    return handles


async def floor_updates(
    client: Client, concurrency: int, count: int, update: str = DECLINE
) -> dict[str, Any]:
    """A bare `execute_update` (`resume`), or one whose handler runs one activity."""
    handles = await floor_handles(client, count)

    async def one(handle: WorkflowHandle[Any, Any]) -> float:
        start = time.perf_counter()
        await handle.execute_update(update, {"interruptId": "x", "approved": update != DECLINE})
        return time.perf_counter() - start

    return await measured(concurrency, [partial(one, h) for h in handles])


async def direct_updates(
    http: aiohttp.ClientSession, url: str, client: Client, concurrency: int, count: int
) -> dict[str, Any]:
    """The thread workflow's own `run` update sent by this process (no gateway), as the
    gateway sends a resume: gateway minus this is the gateway's overhead; this minus the
    floor is the workflow's."""
    from ag_ui_temporal.gateway.auth import ANONYMOUS
    from ag_ui_temporal.workflows.contract import (
        RUN_UPDATE,
        ResumeItem,
        RunRequest,
        RunResult,
        run_digest,
        run_update_id,
        thread_workflow_id,
    )

    parked = await park_many(http, url, count)

    async def one(thread_id: str, parent: str, iid: str, messages: list[dict[str, Any]]) -> float:
        run_id = new_id("run")
        request = RunRequest(
            thread_id=thread_id, run_id=run_id, agent="assistant", parent_run_id=parent,
            messages=messages, resume=[ResumeItem(interrupt_id=iid, status="resolved",
                                                  payload={"approved": False}, has_payload=True)],
            principal=ANONYMOUS,  # the owner of the gateway's threads in dev mode
        )  # fmt: skip
        start = time.perf_counter()
        result = await client.get_workflow_handle(thread_workflow_id(thread_id)).execute_update(
            RUN_UPDATE,
            request,
            id=run_update_id(run_id, run_digest(request)),
            result_type=RunResult,
        )
        assert result.events[-1]["type"] == "RUN_FINISHED", result.events[-1]
        return time.perf_counter() - start

    return await measured(concurrency, [partial(one, *p) for p in parked])


async def park_direct(client: Client, count: int, lanes: int = 64) -> list[Parked]:
    """Park `count` threads with the thread workflow's own update-with-start (no HTTP): the
    parked phase needs thousands, and what it measures is the parked side, not the edge."""
    from ag_ui_temporal.gateway.auth import ANONYMOUS
    from ag_ui_temporal.gateway.runs import _start_thread
    from ag_ui_temporal.settings import Settings
    from ag_ui_temporal.workflows.contract import (
        RUN_UPDATE,
        RunRequest,
        RunResult,
        run_digest,
        run_update_id,
    )

    settings = Settings()

    async def one() -> Parked:
        thread_id, run_id = new_id("parked"), new_id("run")
        message = {"id": new_id("m"), "role": "user", "content": EMAIL}
        request = RunRequest(
            thread_id=thread_id,
            run_id=run_id,
            agent="assistant",
            messages=[message],
            principal=ANONYMOUS,  # as the gateway's dev mode without X-Principal
        )
        result = await client.execute_update_with_start_workflow(
            RUN_UPDATE,
            request,
            start_workflow_operation=_start_thread(settings, "assistant", thread_id, ANONYMOUS),
            id=run_update_id(run_id, run_digest(request)),
            result_type=RunResult,
        )
        outcome = result.events[-1].get("outcome") or {}
        if outcome.get("type") != "interrupt":
            raise RuntimeError(f"no interrupt: {result.events[-1]}")
        return thread_id, run_id, outcome["interrupts"][0]["id"], [message]

    return await bounded(lanes, [one for _ in range(count)])
