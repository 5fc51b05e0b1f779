"""Resumes per second at 1, 10 and 50 concurrent threads: the floor (a bare update), the thread
workflow's update sent past the gateway (direct), the gateway, and the LangGraph peer,
alternated level by level so that the machine's drift hits every one alike."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from temporalio.client import Client

from bench.measure import merge

if TYPE_CHECKING:  # the bench extra's: the report prints without it (tests/bench)
    import aiohttp

LEVELS = {"c1": 1, "c10": 10}
"""50 concurrent added little on 2 cores (CPU-bound from 10 up) and cost minutes of parking."""
WHO = ("floor", "direct", "gateway", "peer")


async def throughput_phase(
    http: aiohttp.ClientSession,
    url: str,
    client: Client,
    n: int,
    peer_url: str | None,
    rounds: int = 2,
) -> dict[str, Any]:
    from ag_ui_temporal.settings import Settings
    from ag_ui_temporal.temporal_client import connect
    from bench import peer
    from bench.cycles import direct_updates, floor_updates, gateway_resumes

    dclient = await connect(Settings(temporal_address=client.service_client.config.target_host))
    out: dict[str, Any] = {who: {} for who in WHO}
    for level, concurrency in LEVELS.items():
        count = (n if concurrency == 1 else max(n, concurrency * 4)) // rounds
        parts: dict[str, list[dict[str, Any]]] = {who: [] for who in out}
        for _ in range(rounds):
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


def ratios(lat: dict[str, Any]) -> dict[str, Any]:
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


def print_throughput(lat: dict[str, Any], rat: dict[str, Any]) -> None:
    print("\nthroughput (decline resumes, the transcript sent along)")
    print("| level | who | p50 ms | p99 ms | resumes/s | CPU ms per resume |")
    print("|---|---|---|---|---|---|")
    for level in LEVELS:
        for who in WHO:
            row = lat.get(who, {}).get(level)
            if row:
                cpu = " ".join(f"{k} {v}" for k, v in row.get("cpu_ms_per_resume", {}).items())
                print(
                    f"| {level} | {who} | {row['p50_ms']} | {row['p99_ms']} | {row['per_s']} "
                    f"| {cpu} |"
                )
    heads = ("gateway/floor p50", "gateway/floor tput", "direct/floor tput", "gateway/peer p50")
    print(f"\n| level | {' | '.join(heads)} | gateway/peer tput |")
    print("|---|---|---|---|---|---|")
    for level, r in rat.items():
        print(
            f"| {level} | {r['gateway_p50_over_floor']} | {r['gateway_tput_over_floor']} "
            f"| {r.get('direct_tput_over_floor', '-')} | {r.get('gateway_p50_over_peer', '-')} "
            f"| {r.get('gateway_tput_over_peer', '-')} |"
        )
