"""A repeated resume is decided alike whether the thread still holds the interrupts
(`workflows.thread._resume`) or the archive does (`workflows.contract.replay`, the gateway):
both apply `workflows.contract.resume`.

The end-to-end proof, against Temporal and both stores: tests/gateway/test_archived_replay.py.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from ag_ui_temporal.workflows.contract import InterruptStatus, ResumeItem, RunRejection, RunRequest
from ag_ui_temporal.workflows.contract.replay import ArchivedInterrupt, replay_verdict
from ag_ui_temporal.workflows.contract.resume import answer_digest
from ag_ui_temporal.workflows.thread._interrupt_archive import archived
from ag_ui_temporal.workflows.thread._resume import RunRejected, plan_run
from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord

APPROVED = {"approved": True, "editedArgs": {"to": "ada@example.com", "n": [1, 2.5]}}


def record(n: int, answer: ResumeItem, resolvers: list[str] | None) -> InterruptRecord:
    return InterruptRecord(
        interrupt={"id": f"int-{n}", "reason": "tool_call"},
        run_id="run-asked",
        status=InterruptStatus(answer.status),
        resolution=answer,
        resolved_by_run="run-answered",
        allowed_resolvers=resolvers,
    )


def entry(n: int, status: str = "resolved", payload: Any = APPROVED) -> ResumeItem:
    sent = status == "resolved"
    return ResumeItem.model_validate(
        {"interrupt_id": f"int-{n}", "status": status, "payload": payload, "has_payload": sent}
    )


RECORDS = [
    record(0, entry(0), ["carol", "group:finance"]),
    record(1, entry(1, "cancelled", None), None),
]

CASES: dict[str, tuple[str | None, list[str], list[ResumeItem]]] = {
    "the same answers": ("carol", [], [entry(0), entry(1, "cancelled", None)]),
    "keys in another order": ("carol", [], [entry(0, payload=dict(reversed(APPROVED.items())))]),
    "by a group member": ("dave", ["finance"], [entry(0)]),
    "a cancel repeated": ("mallory", [], [entry(1, "cancelled", None)]),
    "not a resolver": ("mallory", [], [entry(0)]),
    "anonymous": (None, [], [entry(0)]),
    "another payload": ("carol", [], [entry(0, payload={"approved": False})]),
    "a cancel instead": ("carol", [], [entry(0, "cancelled", None)]),
    "a resolve instead": ("carol", [], [entry(1, payload=None)]),
    "an unknown id too": ("carol", [], [entry(0), entry(7)]),
    "only unknown ids": ("carol", [], [entry(7), entry(8)]),
}


def recent(request: RunRequest) -> str | RunRejection | None:
    """What the thread decides while it holds the interrupts."""
    try:
        # the owner is checked before the archive is read (gateway/streaming/replays.py)
        plan = plan_run("assistant", RECORDS, request, datetime.now(UTC), admitted=True)
    except RunRejected as rejected:
        return rejected.rejection
    return plan.replay_of


@pytest.mark.parametrize("case", CASES)
def test_the_archive_decides_as_the_thread(case: str):
    principal, groups, resume = CASES[case]
    request = RunRequest(
        thread_id="t", run_id="r", agent="assistant", principal=principal, groups=groups
    )
    request.resume = resume
    kept = {r.id: a for r in RECORDS if (a := archived(r)) is not None}
    assert replay_verdict(request, kept) == recent(request)


def test_only_applied_answers_are_archived():
    withdrawn = RECORDS[0].model_copy(
        update={"status": InterruptStatus.WITHDRAWN, "resolution": None, "resolved_by_run": None}
    )
    assert archived(withdrawn) is None
    assert archived(RECORDS[0]) == ArchivedInterrupt(
        interrupt_id="int-0",
        run_id="run-asked",
        status=InterruptStatus.RESOLVED,
        answer_digest=answer_digest("resolved", APPROVED),
        resolved_by_run="run-answered",
        allowed_resolvers=["carol", "group:finance"],
    )
