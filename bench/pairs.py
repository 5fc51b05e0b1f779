"""The two latency pairs against their fair floors, alternated in blocks on one server:

- decline (no tool runs): resume POST → `RUN_FINISHED` read by the client, against a bare
  `execute_update` on a parked floor workflow that stays open;
- approve (the tool runs once): the same, against an update whose handler runs one activity.

Sequential, as one person waits for one answer; the CPU each process spent per resume."""

from __future__ import annotations

from typing import Any

import aiohttp
from temporalio.client import Client

from bench.cycles import floor_updates, gateway_resumes
from bench.floor import APPROVE, DECLINE
from bench.measure import merge

TARGETS = {"p50": 1.25, "p99": 1.5}
"""Ours over the floor, at most (issue #20)."""
CPU_TARGETS = {"server": ("server", 1.1), "worker": ("floor", 1.3)}
"""CPU per approval, ours over the floor's (process: the floor's counterpart, at most)."""
GATEWAY_CPU_MS = 4.0
PAIRS = {"decline": DECLINE, "approve": APPROVE}
"""Each pair's floor update."""


async def pairs_phase(
    http: aiohttp.ClientSession,
    url: str,
    client: Client,
    n: int,
    blocks: int = 4,
    peer_url: str | None = None,
) -> dict[str, Any]:
    """`n` resumes of each of the four, in `blocks` blocks; within a block the floor and ours
    take turns going first, so neither always runs on the machine the other left behind.
    With a peer, its decline (the LangGraph resume) runs in every block too."""
    from bench import peer

    per_block = max(n // blocks, 2)
    parts: dict[str, list[dict[str, Any]]] = {}
    for block in range(blocks):
        for pair, update in PAIRS.items():
            sides = [f"{pair}_floor", pair]
            for who in sides if block % 2 == 0 else sides[::-1]:
                if who == pair:
                    got = await gateway_resumes(http, url, 1, per_block, approved=pair == "approve")
                else:
                    got = await floor_updates(client, 1, per_block, update)
                parts.setdefault(who, []).append(got)
        if peer_url:
            parts.setdefault("peer", []).append(await peer.resumes(http, peer_url, 1, per_block))
    out: dict[str, Any] = {who: merge(got) for who, got in parts.items()}
    out["ratios"] = {pair: verdict(out[pair], out[f"{pair}_floor"]) for pair in PAIRS}
    if "peer" in out:
        out["decline_over_peer"] = {
            key: round(out["decline"][f"{key}_ms"] / out["peer"][f"{key}_ms"], 2) for key in TARGETS
        }
    out["cpu"] = cpu_verdict(out["approve"], out["approve_floor"])
    return out


def cpu_verdict(ours: dict[str, Any], floor: dict[str, Any]) -> dict[str, Any]:
    """CPU per approval (the tool runs once) against the floor's update with one activity."""
    mine, theirs = ours.get("cpu_ms_per_resume", {}), floor.get("cpu_ms_per_resume", {})
    out: dict[str, Any] = {}
    for name, (counterpart, target) in CPU_TARGETS.items():
        if mine.get(name) and theirs.get(counterpart):
            ratio = round(mine[name] / theirs[counterpart], 2)
            out[name] = {"ratio": ratio, "target": target, "pass": ratio <= target}
    if (gateway := mine.get("gateway")) is not None:
        passed = gateway <= GATEWAY_CPU_MS
        out["gateway"] = {"ms": gateway, "target": GATEWAY_CPU_MS, "pass": passed}
    return out


def verdict(ours: dict[str, Any], floor: dict[str, Any]) -> dict[str, Any]:
    """Ours over the floor at p50 and p99, each with its target and whether it is met."""
    out: dict[str, Any] = {}
    for key, target in TARGETS.items():
        ratio = round(ours[f"{key}_ms"] / floor[f"{key}_ms"], 2)
        out[key] = {"ratio": ratio, "target": target, "pass": ratio <= target}
    return out


def print_pairs(pairs: dict[str, Any]) -> None:
    print("\nlatency pairs (sequential; resume POST -> RUN_FINISHED vs the floor's update)")
    print("| pair | who | n | p50 ms | p99 ms | CPU ms per resume |")
    print("|---|---|---|---|---|---|")
    for pair in PAIRS:
        for who in (f"{pair}_floor", pair):
            row = pairs[who]
            cpu = " ".join(f"{k} {v}" for k, v in row.get("cpu_ms_per_resume", {}).items())
            side = "floor" if who.endswith("floor") else "ag-ui-temporal"
            print(f"| {pair} | {side} | {row['n']} | {row['p50_ms']} | {row['p99_ms']} | {cpu} |")
    for pair, ratios in pairs["ratios"].items():
        parts = [
            f"{key} {r['ratio']}x (target <= {r['target']}x: {'PASS' if r['pass'] else 'FAIL'})"
            for key, r in ratios.items()
        ]
        print(f"  {pair}: " + ", ".join(parts))
    if over := pairs.get("decline_over_peer"):
        print(f"  decline over the LangGraph peer: p50 {over['p50']}x, p99 {over['p99']}x")
    for name, r in pairs["cpu"].items():
        figure = f"{r['ratio']}x the floor's" if "ratio" in r else f"{r['ms']} ms"
        limit = f"{r['target']}x" if "ratio" in r else f"{r['target']} ms"
        verdict = "PASS" if r["pass"] else "FAIL"
        print(f"  {name} CPU per approval: {figure} (target <= {limit}: {verdict})")
