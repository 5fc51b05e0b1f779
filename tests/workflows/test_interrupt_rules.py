"""The interrupt rules of the AG-UI spec, case by case and without a server: what
`plan_run` (the run validator) accepts of a resume, which reasons the taxonomy admits, and
what an offer must be to become an interrupt.

The same rules through the real gateway and Temporal: tests/gateway/test_spec_rules.py."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

import pytest

from ag_ui_temporal.workflows._interrupt import (
    INVALID_OFFER,
    INVALID_REASON,
    InvalidInterrupt,
    interrupt_problem,
    reason_problem,
)
from ag_ui_temporal.workflows.contract import ErrorCode, InterruptStatus, ResumeItem, RunRequest
from ag_ui_temporal.workflows.schema import INVALID_RESPONSE_SCHEMA
from ag_ui_temporal.workflows.thread._resume import RunPlan, RunRejected, plan_run
from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord

NOW = datetime(2026, 1, 1, tzinfo=UTC)
MISSING = object()


def record(reason: str, schema: dict[str, Any] | None = None) -> InterruptRecord:
    interrupt: dict[str, Any] = {"id": "int-1", "reason": reason, "message": "?"}
    if schema is not None:
        interrupt["responseSchema"] = schema
    return InterruptRecord(interrupt=interrupt, run_id="r1")


def entry(
    status: Literal["resolved", "cancelled"] = "resolved", payload: Any = MISSING
) -> ResumeItem:
    if payload is MISSING:
        return ResumeItem(interrupt_id="int-1", status=status)
    return ResumeItem(interrupt_id="int-1", status=status, payload=payload, has_payload=True)


def plan(interrupt: InterruptRecord, item: ResumeItem) -> None:
    request = RunRequest(thread_id="t", run_id="r2", agent="inbox", resume=[item])
    plan_run("inbox", [interrupt], request, NOW, admitted=True)  # the owner rule: elsewhere


def refused(interrupt: InterruptRecord, item: ResumeItem) -> tuple[ErrorCode, list[str | None]]:
    with pytest.raises(RunRejected) as rejected:
        plan(interrupt, item)
    rejection = rejected.value.rejection
    return rejection.code, [e.interrupt_id for e in rejection.interrupt_errors]


# -- 5: a cancel omits the payload -------------------------------------------------------------


@pytest.mark.parametrize("payload", [None, False, {"approved": False}, "no"])
def test_a_cancel_with_a_payload_is_an_invalid_resume(payload: Any):
    for reason, schema in (("tool_call", {"type": "object"}), ("input_required", None)):
        assert refused(record(reason, schema), entry("cancelled", payload)) == (
            ErrorCode.INVALID_RESUME,
            ["int-1"],
        )
        plan(record(reason, schema), entry("cancelled"))  # without it: accepted


def test_a_cancel_with_a_payload_is_refused_even_after_expiry():
    expired = record("input_required")
    expired.status = InterruptStatus.EXPIRED
    assert refused(expired, entry("cancelled", {}))[0] == ErrorCode.INVALID_RESUME
    plan(expired, entry("cancelled"))


# -- 7: no responseSchema: the reason decides ------------------------------------------------


@pytest.mark.parametrize(
    ("reason", "good", "bad"),
    [
        ("confirmation", [True, False], [None, "yes", 1, {"approved": True}]),
        (
            "tool_call",
            [{"approved": True}, {"approved": False, "why": "no"}],
            [None, True, {}, {"approved": "yes"}, ["approved"]],
        ),
        ("input_required", [None, "x", 0, [], {"any": "thing"}], []),
        ("acme:review", [None, "ok", {"score": 3}], []),
    ],
)
def test_without_a_schema_the_reason_decides(reason: str, good: list[Any], bad: list[Any]):
    assert refused(record(reason), entry()) == (ErrorCode.INVALID_PAYLOAD, ["int-1"])  # missing
    for payload in good:
        plan(record(reason), entry(payload=payload))
    for payload in bad:
        assert refused(record(reason), entry(payload=payload))[0] == ErrorCode.INVALID_PAYLOAD
    plan(record(reason), entry("cancelled"))


def test_a_schema_decides_over_the_reason():
    anything = record("confirmation", {"type": "string"})
    plan(anything, entry(payload="sure"))
    assert refused(anything, entry())[0] == ErrorCode.INVALID_PAYLOAD


# -- 6: reasons ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reason", ["tool_call", "input_required", "confirmation", "temporal:approval", "acme:x"]
)
def test_core_and_namespaced_reasons_are_valid(reason: str):
    assert reason_problem(reason) is None


@pytest.mark.parametrize(
    "reason",
    ["", None, 5, "approval", "Tool_call", "core:thing", "core:tool_call", "a:b:c", ":x", "x:"],
)
def test_other_reasons_break_the_taxonomy(reason: Any):
    assert reason_problem(reason) is not None


# -- 8: what an offer must be ---------------------------------------------------------------------

GOOD = {"id": "int-9", "reason": "input_required", "message": "Which?"}


@pytest.mark.parametrize(
    "interrupt",
    [
        GOOD,
        {**GOOD, "reason": "acme:pick", "responseSchema": {"type": "string"}},
        {**GOOD, "expiresAt": "2026-01-02T00:00:00.000Z", "metadata": {"k": 1}},
        {**GOOD, "expiresAt": "2026-01-02T00:00:00+02:00", "toolCallId": "call-1"},
        {**GOOD, "reason": "tool_call", "toolCallId": "call-1"},
    ],
)
def test_a_valid_offer(interrupt: dict[str, Any]):
    assert interrupt_problem(interrupt) is None


@pytest.mark.parametrize(
    ("interrupt", "error_type"),
    [
        ([], INVALID_OFFER),
        ({"reason": "input_required", "message": "?"}, INVALID_OFFER),  # no id
        ({**GOOD, "id": 5}, INVALID_OFFER),
        ({**GOOD, "id": ""}, INVALID_OFFER),
        ({"id": "int-9", "message": "?"}, INVALID_OFFER),  # no reason: not an Interrupt at all
        ({**GOOD, "reason": "approval"}, INVALID_REASON),
        ({**GOOD, "reason": "core:x"}, INVALID_REASON),
        ({"id": "int-9", "reason": "input_required"}, INVALID_OFFER),  # no message
        ({**GOOD, "message": "  "}, INVALID_OFFER),
        ({**GOOD, "responseSchema": {"type": 5}}, INVALID_RESPONSE_SCHEMA),
        ({**GOOD, "responseSchema": {"pattern": "(?=x)"}}, INVALID_RESPONSE_SCHEMA),
        ({**GOOD, "responseSchema": True}, INVALID_RESPONSE_SCHEMA),  # AG-UI: an object
        ({**GOOD, "expiresAt": "tomorrow"}, INVALID_OFFER),
        ({**GOOD, "expiresAt": "2026-01-02T00:00:00"}, INVALID_OFFER),  # naive
        ({**GOOD, "expiresAt": 1767312000}, INVALID_OFFER),
        ({**GOOD, "response_schema": {"type": "string"}}, INVALID_OFFER),  # not the wire's key
        ({**GOOD, "metadata": []}, INVALID_OFFER),
        ({**GOOD, "reason": "tool_call"}, INVALID_OFFER),  # AG-UI: toolCallId must be set
        ({**GOOD, "reason": "tool_call", "toolCallId": ""}, INVALID_OFFER),
    ],
)
def test_an_offer_that_cannot_become_an_interrupt(interrupt: Any, error_type: str):
    problem = interrupt_problem(interrupt)
    assert isinstance(problem, InvalidInterrupt), interrupt
    assert problem.error_type == error_type, problem


# -- a partial resume: only an inbox takes one (the gateway's decision paths send it) ------------


def three_open() -> list[InterruptRecord]:
    return [
        InterruptRecord(
            interrupt={"id": f"int-{n}", "reason": "input_required", "message": "?"},
            run_id="r1",
            allowed_resolvers=["ada"],
        )
        for n in range(3)
    ]


def decided(
    agent: str, partial: bool, interrupts: list[InterruptRecord], *ids: str, payload: Any = "x"
) -> RunPlan:
    resume = [
        ResumeItem(interrupt_id=i, status="resolved", payload=payload, has_payload=True)
        for i in ids
    ]
    request = RunRequest(
        thread_id="t", run_id="r2", agent=agent, resume=resume, partial=partial, principal="ada"
    )
    return plan_run(agent, interrupts, request, NOW, admitted=True)


def test_a_partial_resume_answers_only_what_it_names_in_an_inbox():
    plan = decided("inbox", True, three_open(), "int-1")
    assert ([r.id for r, _ in plan.settle], plan.partial) == (["int-1"], True)
    for agent, partial in (("inbox", False), ("assistant", True), ("assistant", False)):
        with pytest.raises(RunRejected) as rejected:
            decided(agent, partial, three_open(), "int-1")
        rejection = rejected.value.rejection
        assert rejection.code == ErrorCode.PARTIAL_RESUME, (agent, partial)
        assert rejection.interrupt_errors[0].interrupt_ids == ["int-0", "int-2"]


def test_a_partial_resume_that_names_every_open_interrupt_is_a_whole_one():
    plan = decided("inbox", True, three_open(), "int-0", "int-1", "int-2")
    assert (len(plan.settle), plan.partial) == (3, False)


def test_a_partial_resume_keeps_every_other_rule():
    def code(interrupts: list[InterruptRecord], **kw: Any) -> ErrorCode:
        with pytest.raises(RunRejected) as rejected:
            decided("inbox", True, interrupts, "int-1", **kw)
        return rejected.value.rejection.code

    offered = three_open()
    offered[1].status, offered[1].run_id = InterruptStatus.OFFERED, ""
    assert code(offered) == ErrorCode.UNKNOWN_INTERRUPT_ID  # not delivered yet
    someone_else = three_open()
    someone_else[1].allowed_resolvers = ["bob"]
    assert code(someone_else) == ErrorCode.FORBIDDEN
    expired = three_open()
    expired[1].expires_at = "2025-12-31T00:00:00+00:00"
    assert code(expired) == ErrorCode.INTERRUPT_EXPIRED
    withdrawn = three_open()
    withdrawn[1].status = InterruptStatus.WITHDRAWN
    assert code(withdrawn) == ErrorCode.INTERRUPT_WITHDRAWN
    schema = three_open()
    schema[1].interrupt["responseSchema"] = {"type": "boolean"}
    assert code(schema) == ErrorCode.INVALID_PAYLOAD
    answered = three_open()
    answered[1].status = InterruptStatus.RESOLVED
    answered[1].resolution = ResumeItem(
        interrupt_id="int-1", status="resolved", payload="y", has_payload=True
    )
    assert code(answered) == ErrorCode.INTERRUPT_ALREADY_RESOLVED
    answered[1].resolved_by_run = "r1"
    assert decided("inbox", True, answered, "int-1", payload="y").replay_of == "r1"


# -- 7: an expired interrupt stops blocking --------------------------------------------------


def expired(*, lapsed: bool = True, overdue: bool = False) -> InterruptRecord:
    """Expired by its timer (`lapsed`: under `expired-interrupts-stop-blocking`), or still open
    past its `expiresAt` (`overdue`: the timer has not fired yet)."""
    interrupt = record("input_required", {"type": "string"})
    interrupt.expires_at = "2025-12-31T00:00:00+00:00"
    if not overdue:
        interrupt.status, interrupt.lapsed = InterruptStatus.EXPIRED, lapsed
    return interrupt


def new_input(interrupt: InterruptRecord) -> RunPlan:
    request = RunRequest(thread_id="t", run_id="r2", agent="inbox")
    return plan_run("inbox", [interrupt], request, NOW, admitted=True)


@pytest.mark.parametrize("overdue", [False, True], ids=["timer-fired", "timer-due"])
def test_an_expired_interrupt_takes_new_input_a_cancel_and_no_resolve(overdue: bool):
    interrupt = expired(overdue=overdue)
    assert new_input(interrupt) == RunPlan()  # no RESUME_REQUIRED
    assert refused(interrupt, entry(payload="late")) == (ErrorCode.INTERRUPT_EXPIRED, ["int-1"])
    plan(interrupt, entry("cancelled"))  # old clients acknowledge it: accepted
    others = [*three_open()[:1], expired(overdue=overdue)]
    assert [r.id for r, _ in decided("assistant", False, others, "int-0").settle] == ["int-0"]


def test_a_late_resolve_is_expired_also_after_a_cancel_acknowledged_it():
    interrupt = expired()
    interrupt.resolution, interrupt.resolved_by_run = entry("cancelled"), "r2"
    assert refused(interrupt, entry(payload="late")) == (ErrorCode.INTERRUPT_EXPIRED, ["int-1"])
    request = RunRequest(thread_id="t", run_id="r3", agent="inbox", resume=[entry("cancelled")])
    assert plan_run("inbox", [interrupt], request, NOW, admitted=True).replay_of == "r2"


def test_one_expired_before_the_patch_still_awaits_a_cancel():
    with pytest.raises(RunRejected) as rejected:
        new_input(expired(lapsed=False))
    assert rejected.value.rejection.code == ErrorCode.RESUME_REQUIRED
    plan(expired(lapsed=False), entry("cancelled"))
