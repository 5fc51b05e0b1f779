"""PNG plots of a bench report (matplotlib, no display)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

WHO = ("floor", "direct", "gateway", "peer")
LABEL = {
    "floor": "raw Temporal update",
    "direct": "thread workflow update, no gateway",
    "gateway": "ag-ui-temporal",
    "peer": "LangGraph peer",
}


def draw(report: dict[str, Any], out: Path) -> None:
    if pairs := report.get("pairs"):
        draw_pairs(pairs, out)
    if cost := report.get("cost"):
        draw_cost(cost, out)
    lat = report.get("latency") or {}
    if lat:
        levels = list(lat["gateway"])
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        width = 0.2
        for i, who in enumerate(WHO):
            rows = lat.get(who) or {}
            if not rows:
                continue
            xs = [j + (i - 1.5) * width for j in range(len(levels))]
            axes[0].bar(xs, [rows[lv]["p50_ms"] for lv in levels], width, label=LABEL[who])
            axes[0].errorbar(
                xs,
                [rows[lv]["p50_ms"] for lv in levels],
                yerr=[
                    [0] * len(levels),
                    [rows[lv]["p99_ms"] - rows[lv]["p50_ms"] for lv in levels],
                ],
                fmt="none",
                ecolor="black",
                capsize=3,
            )
            axes[1].bar(xs, [rows[lv]["per_s"] for lv in levels], width, label=LABEL[who])
        for ax, title in zip(
            axes,
            ("resume latency p50 (bar) to p99 (whisker), ms", "resumes per second"),
            strict=True,
        ):
            ax.set_xticks(range(len(levels)), levels)
            ax.set_title(title)
            ax.legend()
        fig.tight_layout()
        fig.savefig(out / "resume.png", dpi=100)
        plt.close(fig)
    parked = report.get("parked")
    if parked:
        s = parked["samples"]
        xs = [row["parked"] for row in s]
        fig, ax = plt.subplots(figsize=(7, 4))
        for key in ("worker_rss_mb", "server_rss_mb", "gateway_rss_mb", "sqlite_mb"):
            ax.plot(xs, [row[key] for row in s], marker="o", label=key)
        ax.set_xlabel("parked approvals")
        ax.set_ylabel("MB")
        ax.set_title("memory and storage vs parked approvals")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "parked.png", dpi=100)
        plt.close(fig)
    deltas = (report.get("streaming") or {}).get("deltas")
    if deltas:
        draw_deltas(deltas, out)


STAGES = {
    "emit_to_signal_ms": "model emit -> stream signal (100 ms batches)",
    "signal_to_workflow_task_ms": "signal -> workflow task",
    "workflow_task_to_client_ms": "workflow task -> SSE client (query polls)",
}


def draw_deltas(deltas: dict[str, Any], out: Path) -> None:
    """Where a model delta's time goes: p50 of each stage, stacked; p99 of the whole."""
    levels = [k for k, row in deltas.items() if isinstance(row, dict) and "delay_ms" in row]
    fig, ax = plt.subplots(figsize=(7, 4))
    bottom = [0.0] * len(levels)
    for key, label in STAGES.items():
        heights = [deltas[lv][key]["p50"] for lv in levels]
        ax.bar(levels, heights, 0.5, bottom=bottom, label=label)
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    p99 = [deltas[lv]["delay_ms"]["p99"] for lv in levels]
    ax.plot(levels, p99, "k_", ms=30, label="p99")
    ax.set_ylim(0, max(p99) * 1.4)  # room for the legend
    ax.set_ylabel("ms")
    ax.set_title("model delta -> SSE client: p50 per stage, p99 of the whole")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "streaming.png", dpi=100)
    plt.close(fig)


PAIR_BARS = {
    "decline_floor": "bare update",
    "decline": "decline",
    "peer": "LangGraph decline",
    "approve_floor": "update + 1 activity",
    "approve": "approve",
    "approve_agent_floor": "update + 2 activities",
}


def draw_pairs(pairs: dict[str, Any], out: Path) -> None:
    """Each pair next to its floor: p50 bars, p99 whiskers, sequential."""
    who = [w for w in PAIR_BARS if w in pairs]
    p50 = [pairs[w]["p50_ms"] for w in who]
    p99 = [pairs[w]["p99_ms"] for w in who]
    colors = ["tab:gray" if w.endswith("floor") else "tab:blue" for w in who]
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.bar([PAIR_BARS[w] for w in who], p50, 0.6, color=colors)
    yerr = [[0] * len(who), [b - a for a, b in zip(p50, p99, strict=True)]]
    ax.errorbar(range(len(who)), p50, yerr=yerr, fmt="none", ecolor="black", capsize=4)
    ax.set_ylabel("ms")
    ax.set_title("resume POST -> RUN_FINISHED against its floor: p50 (bar) to p99 (whisker)")
    fig.tight_layout()
    fig.savefig(out / "pairs.png", dpi=100)
    plt.close(fig)


def draw_cost(cost: dict[str, Any], out: Path) -> None:
    """History bytes, events and billable actions per approval cycle: the floor's (one
    activity, and the agent's two where measured), short, long."""
    cycles = cost["cycles"]
    bars = {"floor": ("floor", "approve"), "agent floor": ("floor", "approve_agent"),
            "short": ("short", "approve"), "long": ("long", "approve")}  # fmt: skip
    bars = {label: at for label, at in bars.items() if at[1] in cycles[at[0]]}
    rows = [cycles[w][kind]["history"] or {} for w, kind in bars.values()]
    colors = ["tab:gray" if w == "floor" else "tab:blue" for w, _ in bars.values()]
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.5))
    for ax, key, title in zip(
        axes,
        ("bytes", "events", "actions"),
        ("history bytes", "history events", "billable actions (history)"),
        strict=True,
    ):
        ax.bar(list(bars), [row.get(key, 0) for row in rows], 0.6, color=colors)
        ax.set_title(f"{title} per approval cycle", fontsize=9)
    fig.tight_layout()
    fig.savefig(out / "cost.png", dpi=100)
    plt.close(fig)
