"""LangGraph on LangGraph: the same graph served here and under `ag-ui-langgraph`.

The graph is the example of `make run` (`bench/graph_agent.py`): a model node whose model
calls `sendEmail`, a `sendEmail` node that asks a person first (`interrupt()`) and sends once
approved (once per call id, in a SQLite store's outbox), then the model again with the
result. Ours: registered with `register_graph`, served at `/agents/langgraph` by the gateway,
run by the thread workflow, its model node an activity, its `sendEmail` node workflow code
that sends through the worker's `sendEmail` activity (the Temporal server, the worker and
the gateway: three processes). The peer: the same graph compiled with `AsyncSqliteSaver`
(WAL, `synchronous=normal`) behind `ag-ui-langgraph`'s FastAPI endpoint, its send the same
activity code run in its process (`bench.peer PORT DB email`), one uvicorn process.

Decline (`{"approved": false}`) and approve (`{"approved": true}`) each resume the
`sendEmail` node and call the model again with its result (approve also sends): resume POST
→ `RUN_FINISHED` read by the client, the transcript sent along, sequential (one person waits
for one answer), alternated in blocks, who goes first swapping every block. CPU per resume:
ours is the sum of its three processes, the peer's its one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bench.measure import merge

if TYPE_CHECKING:  # the bench extra: not in the test venv, which checks the helpers below
    import aiohttp

    from bench.stack import Proc, Stack

SIDES = ("ours", "peer")
KINDS = {"decline": False, "approve": True}
"""Each resume: its `approved`."""
OURS = ("server", "worker", "gateway")
"""Whose CPU our side spends; a peer's is its one process (its SQLite runs in it)."""
LABELS = {"ours": "ag-ui-temporal (register_graph)", "peer": "ag-ui-langgraph + SQLite"}


def ours_url(stack: Stack) -> str:
    return f"{stack.gateway_url}/agents/langgraph"


async def warm_up(http: aiohttp.ClientSession, stack: Stack, peer_proc: Proc | None) -> str | None:
    """The peer's URL once it serves (None without it), both sides warmed up (imports, the
    sandbox, connections) by a few declines and approvals."""
    from bench import peer
    from bench.cycles import EMAIL, gateway_resumes

    if peer_proc is None:
        return None
    peer_url = await peer.wait_ready(http, peer_proc)
    for approved in KINDS.values():
        await gateway_resumes(http, ours_url(stack), 1, 4, approved=approved)
        await peer.resumes(http, peer_url, 1, 4, EMAIL, approved)
    return peer_url


def block_order(block: int) -> list[str]:
    """Who runs first in `block`: ours and the peer take turns."""
    return list(SIDES) if block % 2 == 0 else list(SIDES)[::-1]


async def graphs_phase(
    http: aiohttp.ClientSession,
    url: str,
    peer_url: str,
    n: int,
    blocks: int = 4,
    peer_process: str = "graph_peer",
) -> dict[str, Any]:
    """`n` declines and `n` approvals on each side, in `blocks` blocks (also each framework's
    comparison, `bench.sdk_peers`: its peer is its own process)."""
    from bench import peer
    from bench.cycles import EMAIL, gateway_resumes

    per_block = max(n // blocks, 2)
    parts: dict[str, list[dict[str, Any]]] = {}
    for block in range(blocks):
        for kind, approved in KINDS.items():
            for side in block_order(block):
                if side == "ours":
                    got = await gateway_resumes(http, url, 1, per_block, approved=approved)
                else:
                    got = await peer.resumes(http, peer_url, 1, per_block, EMAIL, approved)
                parts.setdefault(f"{side}_{kind}", []).append(got)
    out: dict[str, Any] = {who: merge(got) for who, got in parts.items()}
    out["peer_process"] = peer_process
    return summarize(out)


def processes(out: dict[str, Any], side: str) -> tuple[str, ...]:
    return OURS if side == "ours" else (out.get("peer_process", "graph_peer"),)


def side_cpu(out: dict[str, Any], row: dict[str, Any], side: str) -> float:
    """CPU ms per resume of `side`'s processes."""
    cpu: dict[str, float] = row.get("cpu_ms_per_resume", {})
    return round(sum(cpu.get(name, 0.0) for name in processes(out, side)), 2)


def summarize(out: dict[str, Any]) -> dict[str, Any]:
    """Each row's side CPU, and ours over the peer's: p50, p99, CPU per resume."""
    out["ratios"] = {}
    for kind in KINDS:
        ours, theirs = out[f"ours_{kind}"], out[f"peer_{kind}"]
        ours["cpu_ms"] = side_cpu(out, ours, "ours")
        theirs["cpu_ms"] = side_cpu(out, theirs, "peer")
        ratios = {key: round(ours[f"{key}_ms"] / theirs[f"{key}_ms"], 2) for key in ("p50", "p99")}
        if theirs["cpu_ms"]:
            ratios["cpu"] = round(ours["cpu_ms"] / theirs["cpu_ms"], 2)
        out["ratios"][kind] = ratios
    return out


def print_graphs(
    out: dict[str, Any],
    title: str = "LangGraph on LangGraph (the example graph",
    labels: dict[str, str] = LABELS,
) -> None:
    print(f"\n{title}; sequential; resume POST -> RUN_FINISHED)")
    print("| resume | who | n | p50 ms | p99 ms | CPU ms per resume (processes) |")
    print("|---|---|---|---|---|---|")
    for kind in KINDS:
        for side in SIDES:
            row = out[f"{side}_{kind}"]
            cpu = " ".join(
                f"{k} {v}" for k, v in row.get("cpu_ms_per_resume", {}).items()
                if k in processes(out, side)
            )  # fmt: skip
            print(f"| {kind} | {labels[side]} | {row['n']} | {row['p50_ms']} | {row['p99_ms']} "
                  f"| {row['cpu_ms']} ({cpu}) |")  # fmt: skip
    for kind, ratios in out["ratios"].items():
        shown = ", ".join(f"{key} {ratio}x" for key, ratio in ratios.items())
        print(f"  {kind}, ours over the peer: {shown}")
