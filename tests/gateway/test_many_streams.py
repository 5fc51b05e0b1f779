"""200 SSE clients at once on one gateway: every one served in full, nothing left behind.

Ten runs block in their tool; each is streamed by the client that resumed it
and joined by 19 more (other tabs, other devices), so 200 streams are open at
once until the test lets the tools finish.
"""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from typing import Any

import httpx

from tests.agui import frames, interrupts, resolve, run, run_body
from tests.gateway.conftest import Stack

RUNS, CLIENTS_PER_RUN = 10, 20
CLIENTS = RUNS * CLIENTS_PER_RUN


async def test_200_concurrent_streams(gated: httpx.AsyncClient, stack: Stack, thread_id: str):
    threads = [f"{thread_id}-{n}" for n in range(RUNS)]
    paused = await asyncio.gather(
        *(run(gated, t, text="Send an email to ada@example.com saying hi") for t in threads)
    )
    bodies = [
        run_body(t, resume=[resolve(interrupts(events)[0], {"approved": True})])
        for t, events in zip(threads, paused, strict=True)
    ]
    all_started = asyncio.Barrier(CLIENTS + 1)

    async def read(
        request: httpx.Request, http: httpx.AsyncClient, started: asyncio.Event
    ) -> list[str]:
        seen: list[str] = []
        response = await http.send(request, stream=True)
        try:
            assert response.status_code == 200, await response.aread()
            async for frame in frames(response):
                if frame.data is None:
                    continue  # a keepalive comment
                seen.append(frame.data["type"])
                if seen == ["RUN_STARTED"]:
                    started.set()
                    await all_started.wait()
        finally:
            await response.aclose()
        return seen

    limits = httpx.Limits(max_connections=CLIENTS + 10)
    async with httpx.AsyncClient(base_url=stack.url, timeout=120, limits=limits) as http:
        gc.collect()
        tracemalloc.start()
        baseline = tracemalloc.get_traced_memory()[0]

        async def open_run(body: dict[str, Any]) -> list[asyncio.Task[list[str]]]:
            """The resuming client's stream, then (once the run exists) those joining it."""
            post = http.build_request("POST", "/agents/assistant", json=body)
            started = asyncio.Event()
            streams = [asyncio.create_task(read(post, http, started))]
            async with asyncio.timeout(30):
                await started.wait()  # the run exists: now it can be joined
            join: dict[str, Any] = {
                "runId": body["runId"],
                "offset": -1,
                "threadId": body["threadId"],
            }
            for _ in range(CLIENTS_PER_RUN - 1):
                get = http.build_request("GET", "/agents/assistant", params=join)
                streams.append(asyncio.create_task(read(get, http, asyncio.Event())))
            return streams

        per_run = await asyncio.gather(*map(open_run, bodies))  # the ten runs side by side
        async with asyncio.timeout(120):
            await all_started.wait()  # 200 streams open, every run blocked in its tool
        health = (await http.get("/healthz")).json()
        during = tracemalloc.get_traced_memory()[0]
        stack.gate.set()
        results = await asyncio.gather(*(stream for streams in per_run for stream in streams))
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()

    assert health["streams"] == CLIENTS and health["readers"] == RUNS  # one reader per run
    assert all(seen[0] == "RUN_STARTED" and seen[-1] == "RUN_FINISHED" for seen in results)
    runs = [results[i : i + CLIENTS_PER_RUN] for i in range(0, CLIENTS, CLIENTS_PER_RUN)]
    for clients in runs:  # every client of a run got the same whole run
        assert len({tuple(seen) for seen in clients}) == 1
    # and every run the same events, but for how many deltas its text streamed in
    shapes = {tuple(t for t in clients[0] if t != "TEXT_MESSAGE_CONTENT") for clients in runs}
    assert len(shapes) == 1 and all("TEXT_MESSAGE_CONTENT" in clients[0] for clients in runs)
    async with httpx.AsyncClient(base_url=stack.url) as http:
        assert (await http.get("/healthz")).json() == {"status": "ok", "streams": 0, "readers": 0}
    per_stream = (during - baseline) / CLIENTS
    print(f"\n{CLIENTS} streams: {per_stream / 1024:.1f} KiB each while open, "
          f"{(after - baseline) / 1024:.0f} KiB left after")  # fmt: skip
    assert per_stream < 256 * 1024
    assert after - baseline < 4 * 1024 * 1024
