"""The capacity model's inputs, read from a `make bench` report (or, where it lacks a phase,
the fallback figure with its source)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

DOC = "docs/benchmarks.md, 2026-12-01"
FALLBACK: dict[str, tuple[float, str]] = {
    "actions_per_cycle": (11, "a loaded 2026-12-01 validation run (cost phase)"),
    "history_events_per_cycle": (35, "a loaded 2026-12-01 validation run (cost phase)"),
    "history_bytes_per_cycle": (36_600, "a loaded 2026-12-01 validation run (cost phase)"),
    "db_writes_per_cycle": (18.5, "a loaded 2026-12-01 validation run (cost phase)"),
    "server_cpu_ms_per_cycle": (58, f"{DOC}: 29 ms server CPU per resume, twice per cycle"),
    "worker_cpu_ms_per_cycle": (54, f"{DOC}: 27 ms worker CPU per resume, twice per cycle"),
    "gateway_cpu_ms_per_cycle": (10, f"{DOC}: ~5 ms gateway CPU per run, twice per cycle"),
    "history_bytes_per_parked_thread": (19_200, "a 2026-12-01 validation run (100 parked)"),
    "db_bytes_per_parked_thread": (42_200, "a 2026-12-01 validation run (100 parked, dbstat)"),
    "visibility_rows_per_thread": (1, "one row per workflow execution"),
    "worker_mb_per_cached_thread": (1.2, f"{DOC}: ~1.15 MB per cached thread"),
    "worker_base_mb": (260, "overlays/production: ~260 MiB process"),
    "gateway_kb_per_stream": (69, f"{DOC}: 69 KB RSS per idle SSE stream"),
    "gateway_base_mb": (150, f"{DOC}: 148 MB before the streams"),
    "gateway_idle_cores_per_stream": (0.04 / 1000, f"{DOC}: 0.04 cores for 1,000 idle streams"),
    "queries_per_followed_run_s": (0.95, "a loaded 2026-12-01 run: MAX_POLL is 1 s when quiet"),
    "server_cores_per_followed_run": (0.0066, "a loaded 2026-12-01 run (sse phase, 10 runs)"),
    "worker_cores_per_followed_run": (0.004, "a loaded 2026-12-01 run (sse phase, 10 runs)"),
}


@dataclass
class Inputs:
    actions_per_cycle: float
    history_events_per_cycle: float
    history_bytes_per_cycle: float
    db_writes_per_cycle: float
    server_cpu_ms_per_cycle: float
    worker_cpu_ms_per_cycle: float
    gateway_cpu_ms_per_cycle: float
    history_bytes_per_parked_thread: float
    db_bytes_per_parked_thread: float
    visibility_rows_per_thread: float
    worker_mb_per_cached_thread: float
    worker_base_mb: float
    gateway_kb_per_stream: float
    gateway_base_mb: float
    gateway_idle_cores_per_stream: float
    queries_per_followed_run_s: float
    server_cores_per_followed_run: float
    worker_cores_per_followed_run: float


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict) or data.get(key) is None:
            return None
        data = data[key]
    return data


def measured(report: dict[str, Any]) -> dict[str, tuple[float, str]]:
    """Each input the report has, with where in the report it came from."""
    out: dict[str, tuple[float, str]] = {}

    def take(name: str, value: Any, where: str) -> None:
        if isinstance(value, int | float) and value == value:  # not NaN
            out[name] = (float(value), f"measured: {where}")

    cycle = _get(report, "cost", "cycles", "short", "approve") or {}
    take("actions_per_cycle", _get(cycle, "server", "actions"), "cost, server's action counter")
    take("history_events_per_cycle", _get(cycle, "history", "events"), "cost, history")
    take("history_bytes_per_cycle", _get(cycle, "history", "bytes"), "cost, history")
    take("db_writes_per_cycle", _get(cycle, "server", "db_writes"), "cost, persistence writes")
    for process in ("server", "worker", "gateway"):
        resume = _get(report, "pairs", "approve", "cpu_ms_per_resume", process)
        ask = _get(report, "cost", "short", "ask", "cpu_ms", process)
        if resume is not None and ask is not None:
            take(f"{process}_cpu_ms_per_cycle", resume + ask, "pairs (approve) + cost (ask)")
    parked = report.get("parked") or {}
    tables = parked.get("sqlite_bytes_per_thread") or {}
    if tables:
        history = sum(v for k, v in tables.items() if k.startswith("history_"))
        take("history_bytes_per_parked_thread", history, "parked, SQLite history_* tables")
        total = sum(v for k, v in tables.items() if k != "visibility_rows")
        take("db_bytes_per_parked_thread", total, "parked, SQLite dbstat")
        take("visibility_rows_per_thread", tables.get("visibility_rows"), "parked, rows")
    take("worker_mb_per_cached_thread", cache_slope(parked), "parked, worker RSS slope")
    sse = report.get("sse") or {}
    take("gateway_kb_per_stream", sse.get("rss_kb_per_stream"), "sse, RSS per stream")
    take("gateway_base_mb", sse.get("gateway_rss_mb_before"), "sse, RSS before the streams")
    if sse.get("streams"):
        idle = sse.get("gateway_idle_cpu_cores")
        take("gateway_idle_cores_per_stream", idle / sse["streams"] if idle else None, "sse")
    take("queries_per_followed_run_s", sse.get("query_actions_per_run_s"), "sse, queries")
    for process in ("server", "worker"):  # the readers' queries reach both
        idle = _get(sse, "idle_cpu_cores", process)
        if idle is not None and sse.get("runs"):
            where = "sse, idle CPU (with the process's own idle)"
            take(f"{process}_cores_per_followed_run", idle / sse["runs"], where)
    return out


def cache_slope(parked: dict[str, Any]) -> float | None:
    """Worker RSS per parked thread while the cache fills (up to its size)."""
    cap = parked.get("worker_max_cached_workflows") or 1000
    rows = [s for s in parked.get("samples") or [] if s["parked"] <= cap]
    if len(rows) < 2:
        return None
    first, last = rows[0], rows[-1]
    grown = float(last["worker_rss_mb"] - first["worker_rss_mb"])
    return grown / float(last["parked"] - first["parked"])


def read_inputs(report: dict[str, Any]) -> tuple[Inputs, dict[str, str]]:
    got = {**FALLBACK, **measured(report)}
    values = {f.name: got[f.name][0] for f in fields(Inputs)}
    sources = {f.name: got[f.name][1] for f in fields(Inputs)}
    return Inputs(**values), sources
