"""Cost on the shared server per approval cycle, ours against the hand-written floor, on a
short thread and on one with ~200 earlier messages (it should not grow with the transcript).

A cycle is an ask (a run that calls the model and parks on the sendEmail approval) and its
resume (decline: no tool; approve: the tool runs once). The floor's cycle, written by hand
on Temporal: an update that runs one activity (the model) and parks, then an update that
runs nothing (decline), one activity (approve: the tool) or two (approve_agent: the tool,
then the model asked again with its result, as an LLM agent's approval does). Each step is
taken by every sample thread in turn, so the server's `action` counter can be read around
each step."""

from __future__ import annotations

from typing import Any

import aiohttp
from temporalio.client import Client

from bench.actions import counted_since, server_counters
from bench.client import new_id, post_run
from bench.cycles import Parked, floor_handles, park, resume_body, transcript
from bench.floor import AGENT, APPROVE, DECLINE
from bench.history import Mark, mark, mean_of
from bench.measure import CPU_SECONDS

FILLER = "Earlier in this thread we talked about the quarterly numbers and the offsite. " * 4


def earlier_messages(count: int) -> list[dict[str, Any]]:
    """`count` earlier user messages of ~330 bytes (the thread keeps its users' messages)."""
    return [{"id": new_id("m"), "role": "user", "content": f"{i}: {FILLER}"} for i in range(count)]


def cpu_now() -> dict[str, float]:
    return {name: seconds() for name, seconds in CPU_SECONDS.items()}


def cpu_per(before: dict[str, float], jobs: int) -> dict[str, float]:
    spent = {name: 1000 * (s - before[name]) / jobs for name, s in cpu_now().items()}
    return {name: round(ms, 2) for name, ms in spent.items() if ms >= 0.05}


class Step:
    """One step taken by every sample: its history deltas, CPU and server-counted actions."""

    def __init__(self, http: aiohttp.ClientSession, metrics_url: str, client: Client) -> None:
        self.http, self.metrics_url, self.client = http, metrics_url, client
        self.out: dict[str, Any] = {}

    async def take(self, name: str, ids: list[str], jobs: list[Any]) -> list[Any]:
        before_marks = [await mark(self.client, i) for i in ids]
        counters = await server_counters(self.http, self.metrics_url)
        cpu = cpu_now()
        results = [await job() for job in jobs]
        spent = cpu_per(cpu, len(jobs))
        after_counters = await server_counters(self.http, self.metrics_url)
        counted = counted_since(counters, after_counters, len(jobs))
        after: list[Mark] = [await mark(self.client, i) for i in ids]
        history = mean_of([a.since(b) for a, b in zip(after, before_marks, strict=True)])
        self.out[name] = {"history": history, "server": counted, "cpu_ms": spent}
        return results


async def thread_cost(
    http: aiohttp.ClientSession,
    url: str,
    client: Client,
    metrics_url: str,
    samples: int,
    earlier: int,
) -> dict[str, Any]:
    from ag_ui_temporal.workflows.contract import thread_workflow_id

    parked: list[Parked] = [
        await park(http, url, new_id("cost"), earlier_messages(earlier)) for _ in range(samples)
    ]
    ids = [thread_workflow_id(p[0]) for p in parked]
    step = Step(http, metrics_url, client)

    def resume(p: Parked, approved: bool) -> Any:
        async def job() -> list[dict[str, Any]]:
            events, _ = await post_run(http, url, resume_body(p[0], p[1], p[2], approved, p[3]))
            assert events[-1]["type"] == "RUN_FINISHED", events[-1]
            return transcript(events) or p[3]

        return job

    held = await step.take("decline", ids, [resume(p, False) for p in parked])

    def ask(p: Parked, messages: list[dict[str, Any]]) -> Any:
        return lambda: park(http, url, p[0], messages)

    asked = await step.take("ask", ids, [ask(p, m) for p, m in zip(parked, held, strict=True)])
    await step.take("approve", ids, [resume(p, True) for p in asked])
    return step.out | {"earlier_messages": earlier, "samples": samples}


async def floor_cost(
    http: aiohttp.ClientSession, client: Client, metrics_url: str, samples: int
) -> dict[str, Any]:
    handles = await floor_handles(client, samples)
    ids = [h.id for h in handles]
    step = Step(http, metrics_url, client)

    def update(handle: Any, name: str) -> Any:
        return lambda: handle.execute_update(name, {"interruptId": "x"})

    await step.take("decline", ids, [update(h, DECLINE) for h in handles])
    await step.take("approve", ids, [update(h, APPROVE) for h in handles])
    await step.take("approve_agent", ids, [update(h, AGENT) for h in handles])
    step.out["ask"] = step.out["approve"]  # a hand-written ask: one update, one activity
    return step.out | {"samples": samples}


def cycles(costs: dict[str, Any]) -> dict[str, Any]:
    """Per cycle (ask + resume), each figure summed over the two steps; the floor's agent
    approval (`approve_agent`) too where it was taken."""
    out: dict[str, Any] = {}
    for kind in ("decline", "approve", "approve_agent"):
        if kind not in costs:
            continue
        ask, resume = costs["ask"], costs[kind]
        out[kind] = {
            part: _sum(ask[part], resume[part]) for part in ("history", "server", "cpu_ms")
        }
    return out


def _sum(a: dict[str, Any] | None, b: dict[str, Any] | None) -> dict[str, Any] | None:
    """Figures added up (nested tables too); the sample count is not a figure."""
    if a is None or b is None:
        return None
    out: dict[str, Any] = {}
    for k in (a.keys() | b.keys()) - {"samples"}:
        x, y = a.get(k, 0), b.get(k, 0)
        both_tables = isinstance(x, dict) or isinstance(y, dict)
        out[k] = _sum(x or {}, y or {}) if both_tables else round(x + y, 2)
    return out


async def cost_phase(
    http: aiohttp.ClientSession, url: str, client: Client, metrics_url: str, samples: int = 3
) -> dict[str, Any]:
    out: dict[str, Any] = {"floor": await floor_cost(http, client, metrics_url, samples)}
    for label, earlier in (("short", 0), ("long", 200)):
        out[label] = await thread_cost(http, url, client, metrics_url, samples, earlier)
    out["cycles"] = {who: cycles(out[who]) for who in ("floor", "short", "long")}
    return out
