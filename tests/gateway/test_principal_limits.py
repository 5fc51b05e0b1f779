"""Per-principal limits: open event streams and runs a minute, each answered
with 429, `Retry-After` and a JSON body before any stream; other principals unaffected.

A gateway of its own runs with small limits, and a worker whose `sendEmail` waits at a
gate, so a resumed run's stream stays open for as long as the test needs.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from ag_ui_temporal.gateway.limits import PrincipalLimits
from ag_ui_temporal.gateway.main import create_app
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.worker import build_worker
from tests.agui import frames, interrupts, resolve, run, run_body, thread_state, types
from tests.conftest import serve_app
from tests.gateway.conftest import GatedTools

EMAIL = "Send an email to ada@example.com saying hi"
STREAMS, RUNS = 2, 4  # a stream test takes 4 runs: a run, a resume and two joins


@dataclass
class Limited:
    http: httpx.AsyncClient
    app: FastAPI
    gate: threading.Event


@pytest.fixture(scope="module")
async def limited(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[Limited]:
    name = f"principal-limits-{uuid.uuid4().hex[:8]}"
    settings = Settings(
        data_dir=data_dir / name,
        task_queue=name,
        max_streams_per_principal=STREAMS,
        max_runs_per_minute=RUNS,
    )
    gate = threading.Event()
    app = create_app(settings, client)
    try:
        async with (
            build_worker(
                client, settings, executor, GatedTools(settings.store_url, gate).activities()
            ),
            serve_app(app) as url,
            httpx.AsyncClient(base_url=url, timeout=30) as http,
        ):
            yield Limited(http, app, gate)
    finally:
        gate.set()


def principal() -> str:
    return f"p-{uuid.uuid4().hex[:8]}"


def as_(name: str) -> dict[str, str]:
    return {"X-Principal": name}


def assert_429(response: httpx.Response, limit: str) -> None:
    assert response.status_code == 429, response.text
    assert response.headers["content-type"] == "application/json"
    assert limit in response.json()["detail"]
    assert 1 <= int(response.headers["retry-after"]) <= 60


async def open_stream(
    http: httpx.AsyncClient, stack: AsyncExitStack, request: httpx.Request
) -> httpx.Response:
    """Sends `request` and reads until its first event: the stream is open (and held until
    `stack` closes; its reader is kept too, since dropping it would close the response)."""
    response = await http.send(request, stream=True)
    stack.push_async_callback(response.aclose)
    assert response.status_code == 200, await response.aread()
    reader = frames(response)
    stack.push_async_callback(reader.aclose)
    async with asyncio.timeout(30):
        while (await anext(reader)).data is None:
            pass  # a keepalive comment
    return response


async def missing(client: Client, thread_id: str) -> bool:
    try:
        await thread_state(client, thread_id)
    except RPCError as err:
        return err.status == RPCStatusCode.NOT_FOUND
    return False


async def test_streams_over_the_limit_are_429_and_a_closed_stream_frees_a_slot(
    limited: Limited, thread_id: str
):
    http, alice = limited.http, principal()
    limited.gate.clear()  # the resumed run blocks in its tool: its streams stay open
    [pending] = interrupts(await run(http, thread_id, text=EMAIL, principal=alice))
    body = run_body(thread_id, resume=[resolve(pending, {"approved": True})])
    join = {"runId": body["runId"], "threadId": thread_id, "offset": "-1"}
    async with AsyncExitStack() as streams:
        post = http.build_request("POST", "/agents/assistant", json=body, headers=as_(alice))
        await open_stream(http, streams, post)
        get = http.build_request("GET", "/agents/assistant", params=join, headers=as_(alice))
        joined = await open_stream(http, streams, get)
        # a third stream (a join, a re-attach) is refused before any stream starts
        assert_429(
            await http.get("/agents/assistant", params=join, headers=as_(alice)),
            "MAX_STREAMS_PER_PRINCIPAL",
        )
        reattach = {**as_(alice), "Last-Event-ID": "0"}
        assert_429(
            await http.post("/agents/assistant", json=body, headers=reattach),
            "MAX_STREAMS_PER_PRINCIPAL",
        )
        # another principal is not affected
        bob = principal()
        assert (
            types(await run(http, f"{thread_id}-bob", text="hi", principal=bob))[-1]
            == "RUN_FINISHED"
        )
        # closing one stream frees its slot
        await joined.aclose()
        limits: PrincipalLimits = limited.app.state.principal_limits
        async with asyncio.timeout(30):
            while limits.streams.get(alice) != 1:
                await asyncio.sleep(0.01)
        again = http.build_request("GET", "/agents/assistant", params=join, headers=as_(alice))
        await open_stream(http, streams, again)
        limited.gate.set()
    async with asyncio.timeout(30):
        while alice in limits.streams:  # every stream ended: nothing kept for alice
            await asyncio.sleep(0.01)


async def test_runs_over_the_limit_are_429_and_start_nothing(
    limited: Limited, client: Client, thread_id: str
):
    http, carol = limited.http, principal()
    for n in range(RUNS):
        events = await run(http, f"{thread_id}-{n}", text="hello", principal=carol)
        assert types(events)[-1] == "RUN_FINISHED"
    refused = await http.post(
        "/agents/assistant", json=run_body(thread_id, "hello"), headers=as_(carol)
    )
    assert_429(refused, "MAX_RUNS_PER_MINUTE")
    assert await missing(client, thread_id)
    # another principal is not affected
    dave = principal()
    assert types(await run(http, thread_id, text="hello", principal=dave))[-1] == "RUN_FINISHED"


# -- the counting itself, on a clock the test moves --------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_run_rate_refills_over_time():
    clock = Clock()
    limits = PrincipalLimits(max_streams=1, runs_per_minute=60, clock=clock)
    assert all(limits.take_run("a") is None for _ in range(60))  # a burst up to the limit
    assert limits.take_run("a") == pytest.approx(1.0)  # one token a second
    assert limits.take_run("b") is None  # per principal
    clock.now += 1
    assert limits.take_run("a") is None
    assert limits.take_run("a") is not None


def test_tracked_principals_are_bounded():
    clock = Clock()
    limits = PrincipalLimits(max_streams=1, runs_per_minute=2, tracked=100, clock=clock)
    for n in range(1000):
        limits.take_run(f"p{n}")
    assert len(limits.runs.buckets) == 100  # the least recently seen are forgotten
    clock.now += 60  # a minute idle: every bucket is full again, so none is kept
    limits.take_run("fresh")
    assert list(limits.runs.buckets) == ["fresh"]


def test_stream_slots_are_counted_and_released():
    limits = PrincipalLimits(max_streams=2, runs_per_minute=1)
    assert limits.open_stream("a") and limits.open_stream("a")
    assert not limits.open_stream("a") and limits.open_stream("b")
    limits.close_stream("a")
    assert limits.open_stream("a")
    for name in ("a", "a", "b"):
        limits.close_stream(name)
    assert limits.streams == {}
