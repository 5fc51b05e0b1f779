"""The latency pairs' bookkeeping: who runs first in each block, and the ratios and CPU
verdicts against both approval floors (one activity; an agent's two)."""

from __future__ import annotations

from typing import Any

from bench.pairs import block_order, summarize


def row(p50: float, p99: float, **cpu: float) -> dict[str, Any]:
    return {"n": 4, "p50_ms": p50, "p99_ms": p99, "cpu_ms_per_resume": cpu}


def test_ours_and_each_floor_take_turns_going_first() -> None:
    assert block_order("decline", 0) == ["decline_floor", "decline"]
    assert block_order("decline", 1) == ["decline", "decline_floor"]
    even, odd = block_order("approve", 0), block_order("approve", 1)
    assert even == ["approve_floor", "approve", "approve_agent_floor"]
    for floor in ("approve_floor", "approve_agent_floor"):
        assert (even.index(floor) < even.index("approve")) != (
            odd.index(floor) < odd.index("approve")
        )


def test_approve_is_judged_against_both_floors() -> None:
    out = summarize(
        {
            "decline_floor": row(10, 20, server=4, floor=3),
            "decline": row(12, 24, server=5, worker=4, gateway=3),
            "approve_floor": row(40, 60, server=20, floor=10),
            "approve_agent_floor": row(80, 100, server=40, floor=20),
            "approve": row(90, 160, server=42, worker=24, gateway=5),
        }
    )
    assert out["ratios"]["approve"]["p50"] == {"ratio": 2.25, "target": 1.25, "pass": False}
    assert out["ratios"]["approve_agent"]["p50"] == {"ratio": 1.12, "target": 1.25, "pass": True}
    assert out["ratios"]["approve_agent"]["p99"]["pass"] is False  # 1.6 > 1.5
    assert out["cpu"]["server"]["pass"] is False  # 42 / 20
    assert out["cpu_agent"]["server"] == {"ratio": 1.05, "target": 1.1, "pass": True}
    assert out["cpu_agent"]["worker"] == {"ratio": 1.2, "target": 1.3, "pass": True}
    assert out["cpu_agent"]["gateway"]["pass"] is False  # 5 ms > 4 ms, floor or not
    assert out["floor_activity_p50_ms"] == {"tool": 30, "model": 40}
