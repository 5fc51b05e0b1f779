"""The benchmark's verdict on what the audit trail costs a decline (issue 42)."""

from __future__ import annotations

from typing import Any

import pytest

from bench.report import print_audit_cost


def cost(ours: dict[str, float], floor: dict[str, float]) -> dict[str, Any]:
    return {"short": {"decline": {"history": ours}}, "floor": {"decline": {"history": floor}}}


FLOOR = {"workflow_tasks": 1.0, "activities": 0.0, "actions": 1.0}


def test_records_sent_in_the_runs_own_task_pass(capsys: pytest.CaptureFixture[str]) -> None:
    print_audit_cost(cost({"workflow_tasks": 1.0, "activities": 0.0, "actions": 2.0}, FLOOR))
    line = capsys.readouterr().out
    assert "queue behind (PASS)" in line
    assert "actions +1.0 over the floor's (target <= +1: PASS)" in line


def test_an_activity_after_the_run_fails(capsys: pytest.CaptureFixture[str]) -> None:
    """The background activity of the 2026-12-02 generation: a task and an activity after
    the run's, and two more actions."""
    print_audit_cost(cost({"workflow_tasks": 3.0, "activities": 1.0, "actions": 3.0}, FLOOR))
    line = capsys.readouterr().out
    assert "queue behind (FAIL)" in line
    assert "(target <= +1: FAIL)" in line
