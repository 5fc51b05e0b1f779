"""The peer comparisons' bookkeeping (bench/graphs.py: LangGraph's, the OpenAI Agents SDK's):
ours and the peer take turns going first, and each side's CPU is its own processes' only."""

from __future__ import annotations

from typing import Any

from bench.graphs import block_order, summarize


def row(p50: float, p99: float, **cpu: float) -> dict[str, Any]:
    return {"n": 4, "p50_ms": p50, "p99_ms": p99, "cpu_ms_per_resume": cpu}


def test_ours_and_the_peer_take_turns_going_first() -> None:
    assert block_order(0) == ["ours", "peer"]
    assert block_order(1) == ["peer", "ours"]


def test_ratios_are_ours_over_the_peers_with_each_sides_processes() -> None:
    idle = {"graph_peer": 0.5, "client": 2.0}  # the other side idles; the client is neither
    out = summarize(
        {
            "ours_decline": row(60, 90, server=30, worker=40, gateway=10, **idle),
            "peer_decline": row(40, 60, graph_peer=50, server=1, worker=1, client=2),
            "ours_approve": row(66, 99, server=33, worker=44, gateway=11, **idle),
            "peer_approve": row(33, 66, graph_peer=44, server=1, worker=1, client=2),
        }
    )
    assert out["ours_decline"]["cpu_ms"] == 80 and out["peer_decline"]["cpu_ms"] == 50
    assert out["ratios"]["decline"] == {"p50": 1.5, "p99": 1.5, "cpu": 1.6}
    assert out["ratios"]["approve"] == {"p50": 2.0, "p99": 1.5, "cpu": 2.0}


def test_the_openai_comparisons_peer_is_its_own_process() -> None:
    """The OpenAI Agents SDK's comparison (`bench/openai_agent.py`) counts its peer's process,
    not the LangGraph peer's, which idles beside it."""
    out = summarize(
        {
            "peer_process": "openai_peer",
            "ours_decline": row(60, 90, server=30, worker=40, gateway=10, openai_peer=1),
            "peer_decline": row(6, 9, openai_peer=5, graph_peer=3, worker=1),
            "ours_approve": row(60, 90, server=30, worker=40, gateway=10),
            "peer_approve": row(6, 9, openai_peer=8, graph_peer=3),
        }
    )
    assert (out["ours_decline"]["cpu_ms"], out["peer_decline"]["cpu_ms"]) == (80, 5)
    assert out["ratios"]["approve"] == {"p50": 10.0, "p99": 10.0, "cpu": 10.0}
