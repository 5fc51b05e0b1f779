"""A capacity model from measured costs: what 1 million parked threads, 100 resumes per
second and 10,000 concurrent SSE streams need from the Temporal cluster (self-hosted on
PostgreSQL; Temporal Cloud in actions), from the workers and from the gateways.

    .venv/bin/python -m bench.capacity [--from bench/results/latest.json]
        [--parked 1000000] [--resumes 100] [--streams 10000]

Every input is read from a `make bench` report (`--from`); an input the report lacks falls
back to the figure in `FALLBACK`, printed with its source. docs/capacity.md explains the
formulas. The assumptions (what a PostgreSQL instance or a pod can take) are in `LIMITS`.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from bench import overlay
from bench.model import Inputs, read_inputs

RESULTS = Path(__file__).resolve().parent / "results"
MONTH_S = 30 * 86_400
LIMITS = {
    "cloud_aps": (500, "Temporal Cloud's default namespace limit (docs.temporal.io/cloud/limits)"),
    "pg_writes_per_s": (5_000, "assumed: write transactions/s one well-provisioned PostgreSQL"
                        " primary sustains for Temporal's small transactions"),
    "pod_core": (0.7, "a Python process uses at most ~1 core (GIL); scale out at 70% of it"),
    "gateway_memory_mb": (512, "the gateway's memory limit (deploy/k8s/base/gateway.yaml)"),
    "worker_memory_mb": (3072, "the production worker's memory limit (overlays/production)"),
    "worker_cache": (2000, "WORKER_MAX_CACHED_WORKFLOWS in overlays/production"),
    "pg_overhead": (1.5, "assumed: PostgreSQL row/TOAST/index overhead over SQLite's pages"),
    "shard_writes_per_s": (50, "assumed: comfortable writes/s per history shard (one writer)"),
    "retention_days": (7, "assumed: the namespace's retention of closed runs (continue-as-new)"),
    "pg_storage_gb": (2000, "assumed: the PostgreSQL volume"),
}  # fmt: skip


def limit(name: str) -> float:
    return float(LIMITS[name][0])


def temporal_cloud(i: Inputs, parked: float, resumes: float, runs: float) -> dict[str, Any]:
    """Actions/s: each resume closes one cycle (its ask came before); each followed run adds
    the queries of the gateway's reader (one per run and gateway, whatever its viewers)."""
    aps = resumes * i.actions_per_cycle + runs * i.queries_per_followed_run_s
    return {
        "actions_per_s": round(aps, 1),
        "actions_per_month_millions": round(aps * MONTH_S / 1e6, 1),
        "share_of_default_aps_limit": round(aps / limit("cloud_aps"), 2),
        "active_storage_gb": round(parked * i.history_bytes_per_parked_thread / 1e9, 1),
    }


def self_hosted(i: Inputs, parked: float, resumes: float, runs: float) -> dict[str, Any]:
    """PostgreSQL: rows and bytes of the parked threads, growth and write rate per second;
    history shards sized so that no shard's single writer is busy; the services' CPU."""
    writes = resumes * i.db_writes_per_cycle
    shards = max(512, 2 ** math.ceil(math.log2(max(writes / limit("shard_writes_per_s"), 1))))
    growth = resumes * i.history_bytes_per_cycle * limit("pg_overhead")
    return {
        "db_gb_for_parked": round(
            parked * i.db_bytes_per_parked_thread * limit("pg_overhead") / 1e9, 1
        ),
        "visibility_rows": round(parked * i.visibility_rows_per_thread),
        "history_growth_gb_per_day": round(growth * 86_400 / 1e9, 1),
        "db_gb_at_retention": round(
            (
                parked * i.db_bytes_per_parked_thread * limit("pg_overhead")
                + growth * 86_400 * limit("retention_days")
            )
            / 1e9,
            1,
        ),
        "db_writes_per_s": round(writes),
        "share_of_pg_write_capacity": round(writes / limit("pg_writes_per_s"), 2),
        "history_shards": shards,
        "writes_per_shard_per_s": round(writes / shards, 2),
        "server_cores": round(resumes * i.server_cpu_ms_per_cycle / 1000, 1),
        "server_cores_for_followed_runs": round(runs * i.server_cores_per_followed_run, 1),
    }


def workers(i: Inputs, resumes: float, runs: float) -> dict[str, Any]:
    """Replicas for the CPU of the cycles and of the readers' queries; memory for the cache;
    KEDA bounds around them."""
    cores = resumes * i.worker_cpu_ms_per_cycle / 1000 + runs * i.worker_cores_per_followed_run
    replicas = max(2, math.ceil(cores / limit("pod_core")))
    memory = i.worker_base_mb + limit("worker_cache") * i.worker_mb_per_cached_thread
    return {
        "cores": round(cores, 1),
        "replicas": replicas,
        "memory_mb_per_replica_at_cache": round(memory),
        "cached_threads_total": int(replicas * limit("worker_cache")),
        "keda": {"minReplicaCount": max(2, replicas), "maxReplicaCount": 2 * replicas,
                 "targetQueueSize": 5},
    }  # fmt: skip


def gateways(i: Inputs, resumes: float, streams: float) -> dict[str, Any]:
    """Replicas for the CPU of the runs and the streams, and for the streams' memory."""
    cores = resumes * i.gateway_cpu_ms_per_cycle / 1000 + streams * i.gateway_idle_cores_per_stream
    room_mb = 0.8 * limit("gateway_memory_mb") - i.gateway_base_mb
    per_replica = max(1, int(room_mb * 1024 / i.gateway_kb_per_stream))
    by_cpu = math.ceil(cores / limit("pod_core"))
    by_memory = math.ceil(streams / per_replica)
    replicas = max(2, by_cpu, by_memory)
    return {
        "cores": round(cores, 2),
        "streams_per_replica": per_replica,
        "replicas_for_cpu": by_cpu,
        "replicas_for_stream_memory": by_memory,
        "replicas": replicas,
        "hpa": {"minReplicas": replicas, "maxReplicas": 2 * replicas,
                "averageUtilization": 70},
    }  # fmt: skip


def bottleneck(model: dict[str, Any]) -> list[tuple[str, float]]:
    """Shares of each fixed limit, largest first: the first is the first bottleneck (workers
    and gateways scale out; these do not, or not without a bigger instance or a quota)."""
    cloud, db = model["cloud"], model["self_hosted"]
    shares = {
        "Temporal Cloud namespace APS (default limit)": cloud["share_of_default_aps_limit"],
        "PostgreSQL writes/s (assumed capacity)": db["share_of_pg_write_capacity"],
        "PostgreSQL storage at retention (assumed volume)": round(
            db["db_gb_at_retention"] / limit("pg_storage_gb"), 2
        ),
    }
    return sorted(shares.items(), key=lambda kv: -kv[1])


def build(i: Inputs, parked: float, resumes: float, streams: float, runs: float) -> dict[str, Any]:
    model: dict[str, Any] = {
        "scenario": {
            "parked": parked,
            "resumes_per_s": resumes,
            "streams": streams,
            "followed_runs": runs,
        },
        "cloud": temporal_cloud(i, parked, resumes, runs),
        "self_hosted": self_hosted(i, parked, resumes, runs),
        "workers": workers(i, resumes, runs),
        "gateways": gateways(i, resumes, streams),
    }
    model["bottlenecks"] = bottleneck(model)
    return model


def show(model: dict[str, Any], i: Inputs, sources: dict[str, str]) -> None:
    print("inputs (per approval cycle = an ask and its resume):")
    for name, value in vars(i).items():
        print(f"  {name} = {value:g}   [{sources[name]}]")
    print("\nassumptions:")
    for name, (value, why) in LIMITS.items():
        print(f"  {name} = {value}: {why}")
    s = model["scenario"]
    print(f"\nscenario: {s['parked']:,.0f} parked threads, {s['resumes_per_s']:g} resumes/s, "
          f"{s['streams']:,.0f} concurrent SSE streams following {s['followed_runs']:,.0f} "
          "running runs")  # fmt: skip
    for part in ("cloud", "self_hosted", "workers", "gateways"):
        print(f"\n{part}:")
        for key, value in model[part].items():
            print(f"  {key}: {value}")
    print("\nshare of each fixed limit (largest first = first bottleneck):")
    for name, share in model["bottlenecks"]:
        print(f"  {share:6.2f}  {name}")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="bench.capacity", description=__doc__)
    parser.add_argument("--from", dest="source", default=str(RESULTS / "latest.json"))
    parser.add_argument("--parked", type=float, default=1e6)
    parser.add_argument("--resumes", type=float, default=100)
    parser.add_argument("--streams", type=float, default=10_000)
    parser.add_argument(
        "--followed-runs",
        type=float,
        default=None,
        help="distinct running runs the streams follow (default: one per stream, the worst)",
    )
    parser.add_argument(
        "--overlay",
        action="store_true",
        help=f"also write {overlay.OVERLAY} for overlay.SCENARIO from this report",
    )
    args = parser.parse_args(argv)
    path = Path(args.source)
    report = json.loads(path.read_text()) if path.exists() else {}
    inputs, sources = read_inputs(report)
    runs = args.streams if args.followed_runs is None else args.followed_runs
    model = build(inputs, args.parked, args.resumes, args.streams, runs)
    show(model, inputs, sources)
    if args.overlay:
        print(f"\nwrote {write_overlay(report)}")
    return model


def write_overlay(report: dict[str, Any]) -> Path:
    """The Kubernetes overlay for `overlay.SCENARIO`, from a `make bench` report."""
    inputs, _ = read_inputs(report)
    return overlay.write(overlay.scenario_model(inputs), limit("pod_core"))


if __name__ == "__main__":
    main()
