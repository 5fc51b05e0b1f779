"""`make bench`: resume latency, throughput, streaming delay, parked scale and idle SSE
streams of ag-ui-temporal, against a raw Temporal update (the floor) and LangGraph
(the peer), all measured in one run on one machine so that ratios cancel its noise.

    .venv/bin/python -m bench.run [--n 60] [--parked 2000] [--streams 1000] [--no-peer]
        [--phases latency,streaming,sse,parked] [--profile gateway,worker]

Writes bench/results/latest.json and bench/results/*.png; prints a summary table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import aiohttp
import psutil
from temporalio.client import Client, WorkflowHandle

from bench.client import new_id, post_run, status
from bench.measure import CPU_SECONDS, bounded, measured, merge, pct, summary
from bench.stack import Stack, wait_until

RESULTS = Path(__file__).resolve().parent / "results"
EMAIL = "Send an email to ada@example.com saying hi"


async def park(http: aiohttp.ClientSession, url: str, thread_id: str) -> tuple[str, str]:
    """A thread whose run ended in a sendEmail approval: (run id, interrupt id)."""
    run_id = new_id("run")
    body = {
        "threadId": thread_id,
        "runId": run_id,
        "messages": [{"id": new_id("m"), "role": "user", "content": EMAIL}],
    }
    for _ in range(3):  # the same run id again re-attaches: safe to retry
        events, _ = await post_run(http, url, body)
        if events[-1].get("code") != "UNAVAILABLE":
            break
        await asyncio.sleep(1)
    outcome = events[-1].get("outcome") or {}
    if outcome.get("type") != "interrupt":
        raise RuntimeError(f"no interrupt: {events[-1]}")
    return run_id, outcome["interrupts"][0]["id"]


def resume_body(thread_id: str, parent: str, interrupt_id: str, approved: bool) -> dict[str, Any]:
    return {
        "threadId": thread_id,
        "runId": new_id("run"),
        "parentRunId": parent,
        "messages": [],
        "resume": [
            {"interruptId": interrupt_id, "status": "resolved", "payload": {"approved": approved}}
        ],
    }


Parked = list[tuple[str, str, str]]
"""(thread id, run id, interrupt id) of each thread parked on its interrupt."""


async def park_many(http: aiohttp.ClientSession, url: str, count: int, lanes: int = 16) -> Parked:
    threads = [new_id("bench") for _ in range(count)]
    parked = await bounded(lanes, [partial(park, http, url, t) for t in threads])
    return [(t, run_id, iid) for t, (run_id, iid) in zip(threads, parked, strict=True)]


async def park_direct(client: Client, count: int, lanes: int = 64) -> Parked:
    """Park `count` threads with the thread workflow's own update-with-start (no HTTP): the
    parked phase needs thousands, and what it measures is the parked side, not the edge."""
    from gateway.auth import ANONYMOUS
    from gateway.runs import _start_thread
    from settings import Settings
    from workflows.contract import RUN_UPDATE, RunRequest, RunResult, run_update_id

    settings = Settings()

    async def one() -> tuple[str, str, str]:
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
            id=run_update_id(run_id),
            result_type=RunResult,
        )
        outcome = result.events[-1].get("outcome") or {}
        if outcome.get("type") != "interrupt":
            raise RuntimeError(f"no interrupt: {result.events[-1]}")
        return thread_id, run_id, outcome["interrupts"][0]["id"]

    return await bounded(lanes, [one for _ in range(count)])


async def gateway_resumes(
    http: aiohttp.ClientSession,
    url: str,
    concurrency: int,
    count: int,
    approved: bool = False,
    timings: list[tuple[str, float]] | None = None,
) -> dict[str, Any]:
    parked = await park_many(http, url, count)

    errors: list[str] = []

    async def one(t: str, parent: str, iid: str) -> float | None:
        events, seconds = await post_run(http, url, resume_body(t, parent, iid, approved), timings)
        if events[-1]["type"] != "RUN_FINISHED":
            errors.append(str(events[-1].get("code")))
            return None
        return seconds

    out = await measured(concurrency, [partial(one, *p) for p in parked])
    if errors:
        out["errors"] = errors
        print(f"  resume errors: {errors}", flush=True)
    return out


# -- the floor: raw temporalio ----------------------------------------------------------------


async def floor_updates(client: Client, concurrency: int, count: int) -> dict[str, Any]:
    async def start() -> WorkflowHandle[Any, Any]:
        return await client.start_workflow(
            "BenchFloor", id=new_id("floor"), task_queue="bench-floor"
        )

    handles = await bounded(16, [start for _ in range(count)])

    # parked, as the threads are before their resume: the first workflow task has run
    await bounded(16, [partial(h.query, "ready") for h in handles])

    async def one(handle: Any) -> float:
        start = time.perf_counter()
        await handle.execute_update("resume", {"interruptId": "x", "approved": False})
        return time.perf_counter() - start

    return await measured(concurrency, [partial(one, h) for h in handles])


async def direct_updates(
    http: aiohttp.ClientSession, url: str, client: Client, concurrency: int, count: int
) -> dict[str, Any]:
    """The thread workflow's own `run` update sent by this process (no gateway), as the
    gateway sends a resume: gateway minus this is the gateway's overhead; this minus the
    floor is the workflow's."""
    from gateway.auth import ANONYMOUS
    from workflows.contract import (
        RUN_UPDATE,
        ResumeItem,
        RunRequest,
        RunResult,
        run_update_id,
        thread_workflow_id,
    )

    parked = await park_many(http, url, count)

    async def one(thread_id: str, parent: str, iid: str) -> float:
        run_id = new_id("run")
        request = RunRequest(
            thread_id=thread_id, run_id=run_id, agent="assistant", parent_run_id=parent,
            messages=[], resume=[ResumeItem(interrupt_id=iid, status="resolved",
                                            payload={"approved": False}, has_payload=True)],
            principal=ANONYMOUS,  # the owner of the gateway's threads in dev mode
        )  # fmt: skip
        start = time.perf_counter()
        result = await client.get_workflow_handle(thread_workflow_id(thread_id)).execute_update(
            RUN_UPDATE, request, id=run_update_id(run_id), result_type=RunResult
        )
        assert result.events[-1]["type"] == "RUN_FINISHED", result.events[-1]
        return time.perf_counter() - start

    return await measured(concurrency, [partial(one, *p) for p in parked])


# -- phases -------------------------------------------------------------------------------------


LEVELS = {"sequential": 1, "c1": 1, "c10": 10, "c50": 50}


async def latency_phase(
    http: aiohttp.ClientSession,
    url: str,
    client: Client,
    n: int,
    peer_url: str | None,
    rounds: int = 2,
) -> dict[str, Any]:
    """Floor, gateway (and peer) alternated level by level, so drift hits all alike."""
    from bench import peer
    from settings import Settings
    from temporal_client import connect

    dclient = await connect(Settings(temporal_address=client.service_client.config.target_host))
    out: dict[str, Any] = {"floor": {}, "direct": {}, "gateway": {}, "peer": {}}
    for level, concurrency in LEVELS.items():
        count = (n if concurrency == 1 else max(n, concurrency * 4)) // rounds
        parts: dict[str, list[dict[str, Any]]] = {who: [] for who in out}
        for _ in range(rounds):  # alternate, so that the machine's drift hits every one
            parts["floor"].append(await floor_updates(client, concurrency, count))
            parts["direct"].append(await direct_updates(http, url, dclient, concurrency, count))
            parts["gateway"].append(await gateway_resumes(http, url, concurrency, count))
            if peer_url:
                parts["peer"].append(await peer.resumes(http, peer_url, concurrency, count))
        for who, got in parts.items():
            if got:
                out[who][level] = merge(got)
        print(
            f"  {level}: floor {out['floor'][level]}  gateway {out['gateway'][level]}"
            f"  peer {out['peer'].get(level)}",
            flush=True,
        )
    return out


async def streaming_phase(http: aiohttp.ClientSession, url: str, n: int) -> dict[str, Any]:
    """Event timestamp (workflow.now(), the workflow task's start) to client receipt, on
    approvals that run the sendEmail activity (so the run outlives QUICK_RUN and is followed)."""
    timings: list[tuple[str, float]] = []
    result = await gateway_resumes(http, url, 1, n, approved=True, timings=timings)
    result.pop("_raw")
    delays = [d for _, d in timings]
    by_type: dict[str, list[float]] = {}
    for kind, d in timings:
        by_type.setdefault(kind, []).append(d)
    return {
        "resume_with_tool": result,
        "delay_ms": {
            "n": len(delays),
            "p50": round(pct(delays, 50), 1),
            "p99": round(pct(delays, 99), 1),
            "max": round(max(delays), 1),
        },
        "delay_ms_by_type": {k: round(pct(v, 50), 1) for k, v in sorted(by_type.items())},
    }


async def parked_phase(
    http: aiohttp.ClientSession, url: str, stack: Stack, count: int
) -> dict[str, Any]:
    from settings import Settings
    from temporal_client import connect

    dclient = await connect(Settings(temporal_address=stack.address))
    procs = stack.procs
    samples = []
    parked: Parked = []
    start = time.perf_counter()
    step = max(count // 8, 1)
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
            }
        )
        print(f"  parked {samples[-1]}", flush=True)
    create_s = time.perf_counter() - start
    await asyncio.sleep(3)
    before = {n: p.cpu_seconds() for n, p in procs.items()}
    idle_s = 10.0
    await asyncio.sleep(idle_s)
    idle_cpu = {n: round((p.cpu_seconds() - before[n]) / idle_s, 4) for n, p in procs.items()}

    async def resume_of(entry: tuple[str, str, str]) -> float:
        thread_id, parent, iid = entry
        events, seconds = await post_run(http, url, resume_body(thread_id, parent, iid, False))
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
        for thread_id, parent, iid in parked:
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
        cpu0 = gateway.cpu_seconds()
        await asyncio.sleep(5)
        idle_cpu = (gateway.cpu_seconds() - cpu0) / 5
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
        "fanout_to_all_s": round(max(received) - released, 2),
    }


# -- main ---------------------------------------------------------------------------------------


async def run_phases(
    args: argparse.Namespace,
    report: dict[str, Any],
    http: aiohttp.ClientSession,
    stack: Stack,
    client: Client,
    url: str,
    peer_url: str | None,
) -> None:
    phases = args.phases.split(",")
    if "latency" in phases:
        print("latency and throughput", flush=True)
        report["latency"] = await latency_phase(http, url, client, args.n, peer_url)
    if "streaming" in phases:
        print("streaming delay", flush=True)
        report["streaming"] = await streaming_phase(http, url, max(args.n // 2, 20))
        from bench.streaming import deltas_phase  # the snapshot's agents (sys.path is set)

        print("model deltas to the SSE client", flush=True)
        report["streaming"]["deltas"] = await deltas_phase(http, stack.gateway_url, client)
    if args.streams and "sse" in phases:
        print(f"{args.streams} idle SSE streams", flush=True)
        report["sse"] = await sse_phase(http, url, stack, args.streams)
    if args.parked and "parked" in phases:
        print(f"{args.parked} parked approvals", flush=True)
        report["parked"] = await parked_phase(http, url, stack, args.parked)


async def main(args: argparse.Namespace) -> dict[str, Any]:
    from bench import peer, plots

    workdir = Path(tempfile.mkdtemp(prefix="agui-bench-"))
    stack = Stack(workdir)
    report: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_avg_at_start": os.getloadavg(),
            "mem_gib": round(psutil.virtual_memory().total / 2**30, 1),
        },
        "args": vars(args),
    }
    stack.snapshot()
    sys.path.insert(0, str(stack.src))  # this process's imports of the project, too
    report["code"] = git_describe()
    t0 = time.perf_counter()
    peer_proc = None
    try:
        stack.start_server()
        client: Client | None = None

        async def server_up() -> bool:
            nonlocal client
            client = await Client.connect(stack.address)
            return await client.service_client.check_health() is not None

        await wait_until(server_up, 60, "temporal")
        assert client is not None
        stack.start_worker()
        stack.start_floor_worker()
        stack.start_gateway(args.gateway_command.split() if args.gateway_command else None)
        if not args.no_peer:
            peer_proc = peer.start(stack)
        CPU_SECONDS.update({name: proc.cpu_seconds for name, proc in stack.procs.items()})
        CPU_SECONDS["client"] = lambda: sum(psutil.Process().cpu_times()[:2])  # this process
        # aiohttp: the load generator shares the 2 cores with what it measures, and costs
        # a third of httpx's CPU per run (1.5 against 4.5 ms)
        # as many connections as lanes; idle ones closed before uvicorn's 5 s keep-alive
        # ends (aiohttp would re-use one the server is closing, and a POST is not retried)
        connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=2)
        timeout = aiohttp.ClientTimeout(total=120)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
            url = f"{stack.gateway_url}/agents/assistant"

            async def gateway_up() -> bool:
                return await status(http, f"{stack.gateway_url}/agents") == 200

            await wait_until(gateway_up, 60, "gateway")
            peer_url = None
            if peer_proc is not None:
                peer_url = await peer.wait_ready(http, peer_proc)
            # warm up every path (imports, sandbox, connections) before measuring
            await gateway_resumes(http, url, 4, 16)
            await floor_updates(client, 4, 16)
            if peer_url:
                await peer.resumes(http, peer_url, 4, 16)
            profilers = start_profilers(stack, args.profile)
            try:
                await run_phases(args, report, http, stack, client, url, peer_url)
            finally:
                stop_profilers(profilers)
    finally:
        stack.stop()
    report["elapsed_s"] = round(time.perf_counter() - t0, 1)
    report["ratios"] = ratios(report)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))  # noqa: ASYNC240 (once, at the end)
    plots.draw(report, out.parent)
    print_table(report)
    print(f"\nwrote {out} and plots in {out.parent}/ ({report['elapsed_s']} s; logs in {workdir})")
    return report


def git_describe() -> dict[str, Any]:
    root = Path(__file__).resolve().parent.parent

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
        return done.stdout.strip()

    return {"head": git("rev-parse", "--short", "HEAD"), "dirty": git("status", "--short")}


def start_profilers(stack: Stack, names: str) -> list[subprocess.Popen[bytes]]:
    """py-spy (collapsed stacks) on the named processes, e.g. `gateway,worker`."""
    spy = str(Path(sys.executable).parent / "py-spy")
    return [
        subprocess.Popen(
            [
                spy,
                "record",
                "--nonblocking",
                "-r",
                "250",
                "--format",
                "raw",
                "-p",
                str(stack.procs[name].popen.pid),
                "-o",
                str(RESULTS / f"profile-{name}.txt"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for name in filter(None, names.split(","))
    ]


def stop_profilers(profilers: list[subprocess.Popen[bytes]]) -> None:
    for spy in profilers:
        spy.send_signal(signal.SIGINT)
        spy.wait(30)


def ratios(report: dict[str, Any]) -> dict[str, Any]:
    lat = report.get("latency") or {}
    out: dict[str, Any] = {}
    for level in LEVELS:
        f, g, p, d = (lat.get(k, {}).get(level) for k in ("floor", "gateway", "peer", "direct"))
        if f and g:
            out[level] = {
                "gateway_p50_over_floor": round(g["p50_ms"] / f["p50_ms"], 2),
                "gateway_tput_over_floor": round(g["per_s"] / f["per_s"], 2),
            }
            if d:
                out[level]["direct_p50_over_floor"] = round(d["p50_ms"] / f["p50_ms"], 2)
                out[level]["direct_tput_over_floor"] = round(d["per_s"] / f["per_s"], 2)
                out[level]["gateway_p50_over_direct"] = round(g["p50_ms"] / d["p50_ms"], 2)
            if p:
                out[level]["gateway_tput_over_peer"] = round(g["per_s"] / p["per_s"], 2)
                out[level]["gateway_p50_over_peer"] = round(g["p50_ms"] / p["p50_ms"], 2)
    return out


def print_table(report: dict[str, Any]) -> None:
    lat = report.get("latency") or {}
    print("\n| level | who | p50 ms | p99 ms | resumes/s | CPU ms per resume |")
    print("|---|---|---|---|---|---|")
    for level in LEVELS:
        for who in ("floor", "direct", "gateway", "peer"):
            row = lat.get(who, {}).get(level)
            if row:
                cpu = " ".join(f"{k} {v}" for k, v in row.get("cpu_ms_per_resume", {}).items())
                print(
                    f"| {level} | {who} | {row['p50_ms']} | {row['p99_ms']} | {row['per_s']} "
                    f"| {cpu} |"
                )
    print(
        "\n| level | gateway/floor p50 | gateway/floor tput | direct/floor tput "
        "| gateway/peer tput |"
    )
    print("|---|---|---|---|---|")
    for level, r in report["ratios"].items():
        print(
            f"| {level} | {r['gateway_p50_over_floor']} | {r['gateway_tput_over_floor']} "
            f"| {r.get('direct_tput_over_floor', '-')} | {r.get('gateway_tput_over_peer', '-')} |"
        )
    if s := report.get("streaming"):
        print(f"\nstreaming delay (workflow.now() -> SSE client), ms: {s['delay_ms']}")
        if d := s.get("deltas"):
            print_deltas(d)
    if s := report.get("sse"):
        print(f"idle SSE: {s}")
    if p := report.get("parked"):
        last = p["samples"][-1]
        print(
            f"parked {p['count']}: worker {last['worker_rss_mb']:.0f} MB, server "
            f"{last['server_rss_mb']:.0f} MB, sqlite {last['sqlite_mb']:.0f} MB, idle cpu "
            f"{p['idle_cpu_cores']}, resume cached {p['resume_cached']}, evicted "
            f"{p['resume_evicted']}"
        )


def print_deltas(deltas: dict[str, Any]) -> None:
    print(f"model deltas -> SSE client ({deltas['model']}), ms:")
    for level, row in deltas.items():
        if isinstance(row, dict) and "delay_ms" in row:
            parts = (
                f"emit->signal {row['emit_to_signal_ms']['p50']}, "
                f"signal->task {row['signal_to_workflow_task_ms']['p50']}, "
                f"task->client {row['workflow_task_to_client_ms']['p50']}"
            )
            print(
                f"  {level}: p50 {row['delay_ms']['p50']} p99 {row['delay_ms']['p99']} "
                f"(p50s: {parts}); per response: "
                f"{row['sse_content_events_per_response']['mean']} SSE content events, "
                f"{row['history_events_per_response']['mean']} history events, "
                f"{row['stream_signals_per_response']['mean']} stream signals; "
                f"CPU ms {row['cpu_ms_per_response']}"
            )
    one = deltas["one_delta"]
    print(
        f"  a one-delta response: {one['history_events']} history events; "
        f"CPU ms {one['cpu_ms_per_response']}"
    )


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench", description=__doc__)
    parser.add_argument("--n", type=int, default=60, help="resumes per level (min 6x conc.)")
    parser.add_argument("--parked", type=int, default=2_000, help="parked approvals (0: skip)")
    parser.add_argument("--streams", type=int, default=1000, help="idle SSE streams (0: skip)")
    parser.add_argument("--phases", default="latency,streaming,sse,parked")
    parser.add_argument("--profile", default="", help="py-spy these: e.g. gateway,worker")
    parser.add_argument("--no-peer", action="store_true", help="skip the LangGraph peer")
    parser.add_argument("--out", default=str(RESULTS / "latest.json"))
    parser.add_argument("--gateway-command", default="", help="run this instead of the gateway")
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))
