"""Scale on the parked side: thousands of parked approvals (memory, storage, idle CPU,
cached and evicted resumes) and thousands of idle SSE streams (gateway memory, fan-out)."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from typing import Any

import aiohttp

from bench.actions import counted_since, server_counters
from bench.client import post_run
from bench.cycles import Parked, park_direct, park_many, resume_body
from bench.measure import summary
from bench.stack import Stack


async def parked_phase(
    http: aiohttp.ClientSession, url: str, stack: Stack, count: int
) -> dict[str, Any]:
    from ag_ui_temporal.settings import Settings
    from ag_ui_temporal.temporal_client import connect

    dclient = await connect(Settings(temporal_address=stack.address))
    procs = stack.procs
    samples = []
    parked: list[Parked] = []
    start = time.perf_counter()
    step = max(count // 8, 1)
    tables = stack.sqlite_tables()
    while len(parked) < count:
        parked += await park_direct(dclient, min(step, count - len(parked)))
        samples.append(
            {
                "parked": len(parked),
                "elapsed_s": round(time.perf_counter() - start, 1),
                "worker_rss_mb": procs["worker"].rss() / 2**20,
                "server_rss_mb": procs["server"].rss() / 2**20,
                "gateway_rss_mb": procs["gateway"].rss() / 2**20,
                "sqlite_mb": stack.sqlite_bytes() / 2**20,
                "store_mb": stack.store_bytes() / 2**20,
            }
        )
        print(f"  parked {samples[-1]}", flush=True)
    create_s = time.perf_counter() - start
    grown = stack.sqlite_tables()
    per_thread = {k: round((v - tables.get(k, 0)) / count, 1) for k, v in grown.items()}
    await asyncio.sleep(3)
    before = {n: p.cpu_seconds() for n, p in procs.items()}
    idle_s = 10.0
    await asyncio.sleep(idle_s)
    idle_cpu = {n: round((p.cpu_seconds() - before[n]) / idle_s, 4) for n, p in procs.items()}

    async def resume_of(entry: Parked) -> float:
        thread_id, parent, iid, messages = entry
        body = resume_body(thread_id, parent, iid, False, messages)
        events, seconds = await post_run(http, url, body)
        assert events[-1]["type"] == "RUN_FINISHED", events[-1]
        return seconds

    # The worker caches 1,000 workflows (LRU): the oldest parked are evicted, the newest cached.
    k = min(20, count // 4)
    evicted = [await resume_of(e) for e in parked[:k]] if count > 1200 else []
    cached = [await resume_of(e) for e in parked[-k:]]
    return {
        "count": count,
        "create_s": round(create_s, 1),
        "create_per_s": round(count / create_s, 1),
        "samples": samples,
        "idle_cpu_cores": idle_cpu,
        "resume_cached": summary(cached),
        "resume_evicted": summary(evicted) if evicted else None,
        "worker_max_cached_workflows": 1000,
        "sqlite_bytes_per_thread": {k: v for k, v in per_thread.items() if v},
    }


async def sse_phase(
    http: aiohttp.ClientSession, url: str, stack: Stack, streams: int
) -> dict[str, Any]:
    """`streams` idle SSE clients joined to 10 runs whose sendEmail activity blocks (the
    bench holds the outbox's SQLite write lock), then released: RSS per stream, fan-out."""
    runs = 10
    parked = await park_many(http, url, runs)
    lock = sqlite3.connect(stack.store, isolation_level=None, timeout=30)
    lock.execute("BEGIN EXCLUSIVE")
    gateway = stack.procs["gateway"]
    starters = []
    received: list[float] = []
    try:
        for thread_id, parent, iid, _ in parked:
            body = resume_body(thread_id, parent, iid, approved=True)
            starters.append(
                (thread_id, body["runId"], asyncio.create_task(post_run(http, url, body)))
            )
        await asyncio.sleep(1.0)  # the runs are blocked in their tool now
        base_rss = gateway.rss()
        opened = 0
        all_open = asyncio.Event()

        async def follow(thread_id: str, run_id: str) -> None:
            nonlocal opened
            params = {"runId": run_id, "threadId": thread_id, "offset": "-1"}
            async with http.get(url, params=params) as response:
                assert response.status == 200, await response.read()
                opened += 1
                if opened == streams:
                    all_open.set()
                buffer = b""
                async for chunk in response.content.iter_any():
                    buffer += chunk
                    if b'"RUN_FINISHED"' in buffer:
                        received.append(time.perf_counter())
                        return

        tasks = [asyncio.create_task(follow(*starters[i % runs][:2])) for i in range(streams)]
        await asyncio.wait_for(all_open.wait(), 60)
        await asyncio.sleep(3)
        open_rss = gateway.rss()
        counters = await server_counters(http, stack.metrics_url)
        since = time.perf_counter()
        cpu0 = {name: proc.cpu_seconds() for name, proc in stack.procs.items()}
        await asyncio.sleep(5)
        idle = {n: (p.cpu_seconds() - cpu0[n]) / 5 for n, p in stack.procs.items()}
        idle_cpu = idle["gateway"]
        # per stream and second: what idle streams cost the server (queries are actions)
        spent = counted_since(counters, await server_counters(http, stack.metrics_url), 1)
        window_s = time.perf_counter() - since
        released = time.perf_counter()
    finally:
        lock.execute("COMMIT")
        lock.close()
    await asyncio.wait_for(asyncio.gather(*tasks, *(s[2] for s in starters)), 120)
    return {
        "streams": streams,
        "runs": runs,
        "gateway_rss_mb_before": round(base_rss / 2**20, 1),
        "gateway_rss_mb_open": round(open_rss / 2**20, 1),
        "rss_kb_per_stream": round((open_rss - base_rss) / streams / 1024, 1),
        "gateway_idle_cpu_cores": round(idle_cpu, 4),
        "idle_cpu_cores": {n: round(c, 4) for n, c in idle.items()},
        # the streams' own cost: the queries of the gateway's one reader per followed run (the
        # blocked tools' retries are the bench's doing)
        "query_actions_per_run_s": round(queries(spent) / window_s / runs, 3),
        "server_actions_idle": spent["actions_by_type"],
        "fanout_to_all_s": round(max(received) - released, 2),
    }


def queries(spent: dict[str, Any]) -> float:
    return float(sum(v for k, v in spent["actions_by_type"].items() if "Query" in k))
