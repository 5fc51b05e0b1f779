"""Who may run a thread and who may answer an interrupt, as the workflow's run validator
decides (`plan_run`), without a server: the contract's access rules, case by case."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ag_ui_temporal.workflows.contract import ErrorCode, InterruptStatus, ResumeItem, RunRequest
from ag_ui_temporal.workflows.thread._resume import RunRejected, plan_run
from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord


def open_record(allowed: list[str] | None = None) -> InterruptRecord:
    return InterruptRecord(
        interrupt={"id": "int-1", "reason": "confirmation", "message": "ok?"},
        run_id="r1",
        allowed_resolvers=allowed,
    )


def request(
    principal: str | None, *groups: str, resume: bool = False, admin: bool = False
) -> RunRequest:
    entries = [ResumeItem(interrupt_id="int-1", status="cancelled")] if resume else []
    return RunRequest(
        thread_id="t", run_id="r2", agent="inbox", principal=principal,
        groups=list(groups), resume=entries, admin=admin,
    )  # fmt: skip


NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("owner", "principal", "groups", "admin", "allowed"),
    [
        (None, None, (), False, False),  # unowned: no one's (fails closed)...
        (None, "bob", (), False, False),
        (None, "bob", (), True, True),  # ...but an admin's
        ("alice", "bob", (), True, False),  # whose reach ends at owned threads
        ("alice", "alice", (), False, True),
        ("alice", "bob", (), False, False),
        ("alice", None, (), False, False),
        ("group:ops", "bob", ("ops",), False, True),
        ("group:ops", "bob", ("dev",), False, False),
        ("group:ops", "group:ops", (), False, False),
    ],
)
def test_only_the_owner_may_run_a_thread(
    owner: str | None, principal: str | None, groups: tuple[str, ...], admin: bool, allowed: bool
):
    for resume in (False, True):
        records = [open_record()] if resume else []
        check = request(principal, *groups, resume=resume, admin=admin)
        if allowed:
            plan_run("inbox", records, check, NOW, owner)
            continue
        with pytest.raises(RunRejected) as refused:
            plan_run("inbox", records, check, NOW, owner)
        assert refused.value.rejection.code == ErrorCode.FORBIDDEN
        items = refused.value.rejection.interrupt_errors
        assert [e.interrupt_id for e in items] == (["int-1"] if resume else [])


@pytest.mark.parametrize(
    ("allowed", "principal", "groups", "ok"),
    [
        (["alice", "group:finance"], "carol", ("finance",), True),
        (["alice", "group:finance"], "alice", (), True),
        (["alice", "group:finance"], "mallory", ("sales",), False),
        (["group:finance"], "group:finance", (), False),
        (["group:finance"], None, ("finance",), False),
    ],
)
def test_allowed_resolvers_name_principals_or_groups(
    allowed: list[str], principal: str | None, groups: tuple[str, ...], ok: bool
):
    record = open_record(allowed)
    check = request(principal, *groups, resume=True)
    if ok:
        [(settled, _)] = plan_run("inbox", [record], check, NOW, admitted=True).settle
        assert settled.status == InterruptStatus.OPEN
        return
    with pytest.raises(RunRejected) as refused:
        plan_run("inbox", [record], check, NOW, admitted=True)
    assert refused.value.rejection.code == ErrorCode.FORBIDDEN
