"""`make bench`: what an approval costs ag-ui-temporal against raw Temporal (the floors) and
LangGraph (the peer), all measured in one run on one machine so that ratios cancel its noise.

    .venv/bin/python -m bench.run [--n 60] [--parked 2000] [--streams 1000] [--no-peer]
        [--phases pairs,cost,throughput,streaming,sse,parked,graphs,openai,adk]
        [--profile gateway,worker]

Phases: the two latency pairs against their floors, approve against the agent's floor too
(`bench/pairs.py`); history events, bytes, billable actions and CPU per approval cycle,
short and long threads (`bench/cost.py`);
throughput with the peer (`bench/throughput.py`); streaming delay (`bench/streaming.py`);
idle SSE streams and parked threads (`bench/scale.py`); the same LangGraph graph here and
under `ag-ui-langgraph` (`bench/graphs.py`); the OpenAI Agents SDK's and Google ADK's
examples here and on their own hosts (`bench/sdk_peers.py`). Writes
bench/results/latest.json and bench/results/*.png, prints a summary (`bench/report.py`);
`python -m bench.capacity` turns the JSON into a capacity estimate.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import aiohttp
import psutil
from temporalio.client import Client

from ag_ui_temporal.cli.dev_server import DEV_SERVER_CONFIG
from bench.client import status
from bench.cycles import floor_updates, gateway_resumes
from bench.floor import AGENT, APPROVE
from bench.measure import CPU_SECONDS
from bench.stack import Stack, wait_until

RESULTS = Path(__file__).resolve().parent / "results"
SERVER_CONFIG = list(DEV_SERVER_CONFIG)
"""The dev server's dynamic config: `make run`'s own (`DEV_SERVER_CONFIG` says why), for
ours, the floors and the peer's server alike."""
PHASES = "pairs,cost,throughput,streaming,sse,parked,graphs,openai,adk"


async def run_phases(
    args: argparse.Namespace,
    report: dict[str, Any],
    http: aiohttp.ClientSession,
    stack: Stack,
    client: Client,
    url: str,
    peer_url: str | None,
    graph_peer_url: str | None,
    sdk_peer_urls: dict[str, str] | None = None,
) -> None:
    """The phases asked for, in order; each one's seconds in `report["phase_s"]`.
    `sdk_peer_urls`: each framework comparison's peer (`bench.sdk_peers`), by phase."""
    from bench import cost, graphs, pairs, scale, sdk_peers, streaming, throughput

    async def streaming_both() -> dict[str, Any]:
        out = await streaming.streaming_phase(http, url, max(args.n // 2, 20))
        out["deltas"] = await streaming.deltas_phase(http, stack.gateway_url, client)
        return out

    async def throughput_and_ratios() -> dict[str, Any]:
        out = await throughput.throughput_phase(http, url, client, args.n, peer_url)
        report["ratios"] = throughput.ratios(out)
        return out

    Phase = tuple[str, str, str, Callable[[], Awaitable[dict[str, Any]]]]
    table: list[Phase] = [
        ("pairs", "pairs", "latency pairs against their floors",
         lambda: pairs.pairs_phase(http, url, client, args.n, args.blocks, peer_url)),
        ("cost", "cost", "cost per approval cycle on the shared server",
         lambda: cost.cost_phase(http, url, client, stack.metrics_url, args.samples)),
        ("throughput", "latency", "throughput", throughput_and_ratios),
        ("streaming", "streaming", "streaming delay, model deltas to the SSE client",
         streaming_both),
        ("sse", "sse", f"{args.streams} idle SSE streams",
         lambda: scale.sse_phase(http, url, stack, args.streams)),
        ("parked", "parked", f"{args.parked} parked approvals",
         lambda: scale.parked_phase(http, url, stack, args.parked)),
        ("graphs", "graphs", "LangGraph on LangGraph: one graph here and under ag-ui-langgraph",
         lambda: graphs.graphs_phase(http, graphs.ours_url(stack), str(graph_peer_url), args.n,
                                     args.blocks)),
    ]  # fmt: skip
    peers = sdk_peer_urls or {}
    table += [
        (phase, phase, sdk.title,
         partial(graphs.graphs_phase, http, sdk_peers.ours_url(stack, sdk), peers.get(phase, ""),
                 args.n, args.blocks, sdk.process))
        for phase, sdk in sdk_peers.PEERS.items()
    ]  # fmt: skip
    skipped = {"sse"} if not args.streams else set()
    skipped |= {"parked"} if not args.parked else set()
    skipped |= {"graphs"} if graph_peer_url is None else set()
    skipped |= set(sdk_peers.PEERS) - set(peers)
    wanted = set(args.phases.split(",")) - skipped
    report["phase_s"] = {}
    for phase, key, title, run in table:
        if phase in wanted:
            print(title, flush=True)
            start = time.perf_counter()
            report[key] = await run()
            report["phase_s"][phase] = round(time.perf_counter() - start, 1)


async def main(args: argparse.Namespace) -> dict[str, Any]:
    from bench import graphs, peer, plots, sdk_peers
    from bench.report import print_report

    workdir = Path(tempfile.mkdtemp(prefix="agui-bench-"))
    stack = Stack(
        workdir, server_config=SERVER_CONFIG if args.server_config is None else args.server_config
    )
    report: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_avg_at_start": os.getloadavg(),
            "mem_gib": round(psutil.virtual_memory().total / 2**30, 1),
        },
        "args": vars(args),
        "server_config": stack.server_config,
    }
    stack.snapshot()
    sys.path.insert(0, str(stack.src))  # this process's imports of the project, too
    report["code"] = git_describe()
    t0 = time.perf_counter()
    peer_proc = graph_peer = None
    with_graphs = "graphs" in args.phases.split(",")
    if with_graphs:  # the example graph, for ours (its worker and gateway) and the peer's
        stack.agent_modules.append("bench.graph_agent")
    sdks = {phase: sdk for phase, sdk in sdk_peers.PEERS.items() if phase in args.phases.split(",")}
    stack.agent_modules += [sdk.module for sdk in sdks.values()]  # their examples, for ours
    from ag_ui_temporal.temporal_client import (
        DATA_CONVERTER,  # the snapshot's: it decodes what ours sends
    )

    try:
        stack.start_server()
        client: Client | None = None

        async def server_up() -> bool:
            nonlocal client
            client = await Client.connect(stack.address, data_converter=DATA_CONVERTER)
            return await client.service_client.check_health() is not None

        await wait_until(server_up, 60, "temporal")
        assert client is not None
        stack.start_worker()
        stack.start_floor_worker()
        stack.start_gateway(args.gateway_command.split() if args.gateway_command else None)
        if not args.no_peer:
            peer_proc = peer.start(stack)
        if with_graphs:
            graph_peer = peer.start(stack, "email")
        sdk_procs = {phase: sdk_peers.start(stack, sdk) for phase, sdk in sdks.items()}
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
            await gateway_resumes(http, url, 2, 4, approved=True)
            await floor_updates(client, 2, 4, APPROVE)
            await floor_updates(client, 2, 4, AGENT)
            if peer_url:
                await peer.resumes(http, peer_url, 4, 16)
            graph_peer_url = await graphs.warm_up(http, stack, graph_peer)
            sdk_peer_urls = {
                phase: await sdk_peers.warm_up(http, stack, sdks[phase], proc)
                for phase, proc in sdk_procs.items()
            }
            profilers = start_profilers(stack, args.profile)
            try:
                await run_phases(
                    args, report, http, stack, client, url, peer_url, graph_peer_url,
                    sdk_peer_urls,
                )  # fmt: skip
            finally:
                stop_profilers(profilers)
    finally:
        stack.stop()
    report["elapsed_s"] = round(time.perf_counter() - t0, 1)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))  # noqa: ASYNC240 (once, at the end)
    plots.draw(report, out.parent)
    print_report(report)
    if out == RESULTS / "latest.json" and set(args.phases.split(",")) >= set(PHASES.split(",")):
        from bench.capacity import write_overlay  # the replicas this report implies

        print(f"\nwrote {write_overlay(report)}")
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


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench", description=__doc__)
    parser.add_argument("--n", type=int, default=60, help="resumes per pair / level")
    parser.add_argument("--parked", type=int, default=2_000, help="parked approvals (0: skip)")
    parser.add_argument("--streams", type=int, default=1000, help="idle SSE streams (0: skip)")
    parser.add_argument("--phases", default=PHASES)
    parser.add_argument("--blocks", type=int, default=4, help="latency pairs: blocks")
    parser.add_argument("--samples", type=int, default=3, help="cost: threads per length")
    parser.add_argument("--profile", default="", help="py-spy these: e.g. gateway,worker")
    parser.add_argument("--no-peer", action="store_true", help="skip the LangGraph peer")
    parser.add_argument("--out", default=str(RESULTS / "latest.json"))
    parser.add_argument(
        "--server-config",
        action="append",
        default=None,
        metavar="KEY=JSON_VALUE",
        help="dev server dynamic config, repeatable (replaces the default: "
        f"{' '.join(SERVER_CONFIG)})",
    )
    parser.add_argument("--gateway-command", default="", help="run this instead of the gateway")
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))
