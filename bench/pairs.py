"""The two latency pairs against their fair floors, alternated in blocks on one server:

- decline (no tool runs): resume POST → `RUN_FINISHED` read by the client, against a bare
  `execute_update` on a parked floor workflow that stays open;
- approve (the tool runs once): the same, against an update whose handler runs one activity,
  and against the floor of an LLM agent's approval, an update running two (the tool, then
  the model asked again with its result, as the assistant does): ours is measured once per
  block and compared with both.

Sequential, as one person waits for one answer; the CPU each process spent per resume."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bench.floor import AGENT, APPROVE, DECLINE
from bench.measure import merge

if TYPE_CHECKING:  # the bench extra: not in the test venv, which checks the helpers below
    import aiohttp
    from temporalio.client import Client

TARGETS = {"p50": 1.25, "p99": 1.5}
"""Ours over the floor, at most: the latency targets each pair passes or fails."""
CPU_TARGETS = {"server": ("server", 1.1), "worker": ("floor", 1.3)}
"""CPU per approval, ours over the floor's (process: the floor's counterpart, at most)."""
GATEWAY_CPU_MS = 4.0
PAIRS = {"decline": DECLINE, "approve": APPROVE}
"""Each pair's first floor update."""
FLOORS = {
    "decline": {"decline_floor": DECLINE},
    "approve": {"approve_floor": APPROVE, "approve_agent_floor": AGENT},
}
"""Each pair's floors (who: its update)."""
RATIOS = {
    "decline": ("decline", "decline_floor"),
    "approve": ("approve", "approve_floor"),
    "approve_agent": ("approve", "approve_agent_floor"),
}
"""Each ratio: (ours, its floor)."""
FLOOR_LABELS = {
    "decline_floor": "floor (update)",
    "approve_floor": "floor (1 activity)",
    "approve_agent_floor": "agent floor (2 activities)",
}


def block_order(pair: str, block: int) -> list[str]:
    """Who runs in `block`, in order: ours between its floors, the order reversed every other
    block, so that ours and each floor take turns going first."""
    first, *others = FLOORS[pair]
    sides = [first, pair, *others]
    return sides if block % 2 == 0 else sides[::-1]


async def pairs_phase(
    http: aiohttp.ClientSession,
    url: str,
    client: Client,
    n: int,
    blocks: int = 4,
    peer_url: str | None = None,
) -> dict[str, Any]:
    """`n` resumes of each of the five, in `blocks` blocks (`block_order`). With a peer, its
    decline (the LangGraph resume) runs in every block too."""
    from bench import peer
    from bench.cycles import floor_updates, gateway_resumes

    per_block = max(n // blocks, 2)
    parts: dict[str, list[dict[str, Any]]] = {}
    for block in range(blocks):
        for pair in FLOORS:
            for who in block_order(pair, block):
                if who == pair:
                    got = await gateway_resumes(http, url, 1, per_block, approved=pair == "approve")
                else:
                    got = await floor_updates(client, 1, per_block, FLOORS[pair][who])
                parts.setdefault(who, []).append(got)
        if peer_url:
            parts.setdefault("peer", []).append(await peer.resumes(http, peer_url, 1, per_block))
    return summarize({who: merge(got) for who, got in parts.items()})


def summarize(out: dict[str, Any]) -> dict[str, Any]:
    """The merged rows with their ratios, CPU verdicts and what each floor activity adds."""
    out["ratios"] = {name: verdict(out[ours], out[floor]) for name, (ours, floor) in RATIOS.items()}
    if "peer" in out:
        out["decline_over_peer"] = {
            key: round(out["decline"][f"{key}_ms"] / out["peer"][f"{key}_ms"], 2) for key in TARGETS
        }
    out["cpu"] = cpu_verdict(out["approve"], out["approve_floor"])
    out["cpu_agent"] = cpu_verdict(out["approve"], out["approve_agent_floor"])
    out["floor_activity_p50_ms"] = {
        "tool": round(out["approve_floor"]["p50_ms"] - out["decline_floor"]["p50_ms"], 2),
        "model": round(out["approve_agent_floor"]["p50_ms"] - out["approve_floor"]["p50_ms"], 2),
    }
    return out


def cpu_verdict(ours: dict[str, Any], floor: dict[str, Any]) -> dict[str, Any]:
    """CPU per approval (the tool runs once) against a floor's update."""
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
    for pair, floors in FLOORS.items():
        for who in [*floors, pair]:
            if row := pairs.get(who):  # a report made without the agent floor lacks it
                print_row(pair, FLOOR_LABELS.get(who, "ag-ui-temporal"), row)
    for name, ratios in pairs["ratios"].items():
        print(f"  {name} ({RATIOS[name][1]}): " + ", ".join(map(_shown, ratios.items())))
    if over := pairs.get("decline_over_peer"):
        print(f"  decline over the LangGraph peer: p50 {over['p50']}x, p99 {over['p99']}x")
    if added := pairs.get("floor_activity_p50_ms"):
        print(f"  p50 each floor activity adds: tool {added['tool']} ms, model {added['model']} ms")
    print_cpu(pairs["cpu"], "the floor's (1 activity)")
    print_cpu(pairs.get("cpu_agent") or {}, "the agent floor's (2 activities)", gateway=False)


def print_row(pair: str, side: str, row: dict[str, Any]) -> None:
    cpu = " ".join(f"{k} {v}" for k, v in row.get("cpu_ms_per_resume", {}).items())
    print(f"| {pair} | {side} | {row['n']} | {row['p50_ms']} | {row['p99_ms']} | {cpu} |")


def _shown(item: tuple[str, dict[str, Any]]) -> str:
    key, r = item
    return f"{key} {r['ratio']}x (target <= {r['target']}x: {'PASS' if r['pass'] else 'FAIL'})"


def print_cpu(cpu: dict[str, Any], against: str, gateway: bool = True) -> None:
    for name, r in cpu.items():
        if "ratio" in r:
            figure, limit = f"{r['ratio']}x {against}", f"{r['target']}x"
        elif gateway:
            figure, limit = f"{r['ms']} ms", f"{r['target']} ms"
        else:
            continue
        print(f"  {name} CPU per approval: {figure} (target <= {limit}: "
              f"{'PASS' if r['pass'] else 'FAIL'})")  # fmt: skip
