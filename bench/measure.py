"""Latency summaries, and the CPU each process spends per measured job."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def summary(latencies_s: list[float], wall_s: float | None = None) -> dict[str, Any]:
    ms = [x * 1000 for x in latencies_s]
    out: dict[str, Any] = {
        "n": len(ms),
        "p50_ms": round(pct(ms, 50), 2),
        "p99_ms": round(pct(ms, 99), 2),
        "mean_ms": round(statistics.fmean(ms), 2) if ms else None,
    }
    if wall_s:
        out["per_s"] = round(len(ms) / wall_s, 1)
        out["_raw"] = (latencies_s, wall_s)
    return out


def merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One summary of several rounds: all their latencies over the sum of their wall times."""
    raws = [part.pop("_raw") for part in parts]
    merged = summary([x for lat, _ in raws for x in lat], sum(wall for _, wall in raws))
    merged.pop("_raw")
    merged["rounds_per_s"] = [part["per_s"] for part in parts]
    cpus = [part["cpu_ms_per_resume"] for part in parts if "cpu_ms_per_resume" in part]
    if cpus:
        means = {name: statistics.fmean(cpu[name] for cpu in cpus) for name in cpus[0]}
        merged["cpu_ms_per_resume"] = {n: round(ms, 2) for n, ms in means.items() if ms >= 0.1}
    return merged


CPU_SECONDS: dict[str, Callable[[], float]] = {}
"""CPU seconds so far of each process the bench started, and of the bench (the client)."""


async def measured(
    concurrency: int, jobs: list[Callable[[], Awaitable[float | None]]]
) -> dict[str, Any]:
    """Run the timed `jobs` (each returns its latency, or None for a failure) `concurrency`
    at a time: their summary, with the CPU each process spent per job meanwhile (what a
    ratio of throughputs on 2 shared cores comes down to)."""
    cpu = {name: seconds() for name, seconds in CPU_SECONDS.items()}
    start = time.perf_counter()
    latencies = await bounded(concurrency, jobs)
    out = summary([x for x in latencies if x is not None], time.perf_counter() - start)
    out["cpu_ms_per_resume"] = {
        name: 1000 * (seconds() - cpu[name]) / len(jobs) for name, seconds in CPU_SECONDS.items()
    }
    return out


async def bounded(n: int, jobs: list[Callable[[], Awaitable[Any]]]) -> list[Any]:
    """Run `jobs` with at most `n` in flight; returns their results in order."""
    results: list[Any] = [None] * len(jobs)
    queue = list(enumerate(jobs))

    async def lane() -> None:
        while queue:
            i, job = queue.pop(0)
            results[i] = await job()

    await asyncio.gather(*(lane() for _ in range(n)))
    return results
