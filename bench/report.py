"""The summary `make bench` prints: each phase's table, from the report it writes."""

from __future__ import annotations

from typing import Any

from bench.graphs import print_graphs
from bench.pairs import print_pairs
from bench.sdk_peers import PEERS
from bench.throughput import print_throughput

COST_STEPS = ("ask", "decline", "approve", "approve_agent")
FLOOR_CYCLES = {"approve": "1 activity", "approve_agent": "agent, 2 activities"}


def print_report(report: dict[str, Any]) -> None:
    print_phases(report)
    if pairs := report.get("pairs"):
        print_pairs(pairs)
    if cost := report.get("cost"):
        print_cost(cost)
    if lat := report.get("latency"):
        print_throughput(lat, report.get("ratios") or {})
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
            f"{p['resume_evicted']}; sqlite bytes per thread {p.get('sqlite_bytes_per_thread')}"
        )
    print_comparisons(report)


def print_comparisons(report: dict[str, Any]) -> None:
    """LangGraph's, then each framework's: ours against its own host."""
    if g := report.get("graphs"):
        print_graphs(g)
    for phase, sdk in PEERS.items():
        if o := report.get(phase):
            print_graphs(o, sdk.title, sdk.labels)


def print_phases(report: dict[str, Any]) -> None:
    machine = report.get("machine") or {}
    load = machine.get("load_avg_at_start")
    print(f"\n{report.get('when')}, {machine.get('cpus')} CPUs, load average at start {load}")
    print(f"seconds per phase: {report.get('phase_s')}")


def print_cost(cost: dict[str, Any]) -> None:
    """Per step and per cycle: history events/bytes, actions (from history; and as the
    server's `action` counter saw them, queries included), CPU per process."""
    print("\ncost on the shared server (per step; a cycle is an ask and its resume)")
    print("| who | step | events | bytes | actions (history) | actions (server) | DB writes "
          "| CPU ms |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for who in ("floor", "short", "long"):
        for step in COST_STEPS:
            row = cost[who].get(step)
            if row:
                print_cost_row(who, step, row)
        for kind, row in cost["cycles"][who].items():
            print_cost_row(who, f"cycle ({kind})", row)
    if "approve_agent" in cost["floor"]:
        print("  (the floor's approve_agent: the tool's activity, then the model's)")
    print_over_floor(cost["cycles"])
    print_flat(cost)
    print_audit_cost(cost)


def print_over_floor(cycles: dict[str, Any]) -> None:
    """Ours (short thread) over each of the floor's approval cycles, from history."""
    ours = cycles["short"]["approve"]["history"] or {}
    for kind, label in FLOOR_CYCLES.items():
        floor = (cycles["floor"].get(kind) or {}).get("history") or {}
        ratios = {k: round(ours[k] / floor[k], 2) for k in ("events", "bytes", "actions")
                  if ours.get(k) and floor.get(k)}  # fmt: skip
        if ratios:
            print(f"  ours (short) / the floor's approval cycle ({label}): {ratios}")


def print_audit_cost(cost: dict[str, Any]) -> None:
    """Issue 42's audit-trail target, on the decline (the one step whose only work beyond the
    floor's bare update is the thread's own result and its audit records): no workflow task
    or activity after the run's own task, for the next run of a sequential client to queue
    behind, and at most one more billable action than the floor's step."""
    ours = cost["short"]["decline"]["history"] or {}
    floor = cost["floor"]["decline"]["history"] or {}
    if not ours or not floor:
        return
    tasks = (ours.get("workflow_tasks", 0), floor.get("workflow_tasks", 0))
    activities = (ours.get("activities", 0), floor.get("activities", 0))
    queued = tasks[0] <= tasks[1] and activities[0] <= activities[1]
    extra = round(ours.get("actions", 0) - floor.get("actions", 0), 2)
    print(
        f"  audit trail on a decline: workflow tasks {tasks[0]} (floor {tasks[1]}), activities "
        f"{activities[0]} (floor {activities[1]}): nothing for the next run to queue behind "
        f"({'PASS' if queued else 'FAIL'}); actions +{extra} over the floor's "
        f"(target <= +1: {'PASS' if extra <= 1 else 'FAIL'})"
    )


def print_cost_row(who: str, step: str, row: dict[str, Any]) -> None:
    h = row["history"] or {}
    server = row["server"] or {}
    cpu = " ".join(f"{k} {v}" for k, v in sorted(row["cpu_ms"].items()))
    print(
        f"| {who} | {step} | {h.get('events')} | {h.get('bytes')} | {h.get('actions')} "
        f"| {server.get('actions')} | {server.get('db_writes')} | {cpu} |"
    )


def print_flat(cost: dict[str, Any]) -> None:
    """Long over short thread, per approval cycle: 1.0 is flat."""
    short, long = cost["cycles"]["short"]["approve"], cost["cycles"]["long"]["approve"]
    if short["history"] and long["history"]:
        ratios = {
            k: round(long["history"][k] / short["history"][k], 2)
            for k in ("events", "bytes", "actions")
            if short["history"].get(k)
        }
        print(f"  long ({cost['long']['earlier_messages']} earlier messages) / short: {ratios}")


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
