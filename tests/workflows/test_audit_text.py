"""A chain's audit trail in sentences (`workflows.contract.audit_text`): every kind of entry,
with display names, the way an answer came, and never a Python value or an internal id."""

from __future__ import annotations

from typing import Any, get_args

import pytest

from ag_ui_temporal.workflows.contract.audit_text import (
    reminder_sentence,
    sentence,
    sentences,
)
from ag_ui_temporal.workflows.contract.chains import (
    AuditEntryView,
    AuditKind,
    ChainView,
    ReminderView,
    StepView,
)

NAMES = {"alice": "Alice Adams", "bob": "Bob Baker", "carol": "Carol Chen", "dana": "Dana Diaz"}
AT = "2026-05-01T09:00:00.000Z"
MANAGER = StepView(name="manager", approvers=["bob"], quorum=1, status="active")
FINANCE = StepView(name="finance", approvers=["carol", "dave", "erin"], quorum=2)


def entry(kind: str, **fields: Any) -> AuditEntryView:
    return AuditEntryView.model_validate({"at": AT, "kind": kind, **fields})


@pytest.mark.parametrize(
    ("fields", "step", "expected"),
    [
        ({"kind": "submitted", "principal": "alice"}, None, "Alice Adams submitted the request."),
        ({"kind": "submitted"}, None, "The request was submitted."),
        (
            {"kind": "step", "step": "manager", "note": "started: 1 of ['bob']"},
            MANAGER,
            "Step manager started: 1 of Bob Baker must approve.",
        ),
        (
            {"kind": "step", "step": "finance", "note": "started: 2 of ['carol', 'dave', 'erin']"},
            FINANCE,
            "Step finance started: 2 of Carol Chen, dave and erin must approve.",
        ),
        (
            # after an escalation the step's quorum changed: the sentence keeps the first one
            {"kind": "step", "step": "manager", "note": "started: 1 of ['bob']"},
            MANAGER.model_copy(update={"quorum": 2}),
            "Step manager started: 1 of Bob Baker must approve.",
        ),
        (
            {"kind": "step", "step": "manager", "note": "started: 1 of []"},
            StepView(name="manager", approvers=[], quorum=1),
            "Step manager started with nobody who may approve it.",
        ),
        ({"kind": "step", "step": "manager", "note": "started"}, None, "Step manager started."),
        (
            {"kind": "step", "step": "manager", "decision": "approved"},
            MANAGER,
            "Step manager was approved.",
        ),
        (
            {"kind": "offered", "step": "manager", "principal": "carol", "interrupt_id": "int-1"},
            MANAGER,
            "Offered to Carol Chen.",
        ),
        (
            {
                "kind": "decision",
                "principal": "bob",
                "decision": "approve",
                "payload": {"decision": "approve", "comment": "ok"},
            },
            MANAGER,
            "Bob Baker approved, note: 'ok'.",
        ),
        (
            {"kind": "decision", "principal": "bob", "decision": "reject"},
            MANAGER,
            "Bob Baker rejected.",
        ),
        (
            {
                "kind": "decision",
                "principal": "bob",
                "decision": "approve",
                "payload": {"decision": "approve"},
                "via": "link",
            },
            MANAGER,
            "Bob Baker approved (by link).",
        ),
        (
            {
                "kind": "decision",
                "principal": "bob",
                "decision": "reject",
                "payload": {"decision": "reject", "comment": "too\nmuch"},
                "via": "api",
            },
            MANAGER,
            "Bob Baker rejected (through the API), note: 'too much'.",
        ),
        (
            {"kind": "decision", "principal": "bob", "decision": "approve", "via": "chat"},
            MANAGER,
            "Bob Baker approved.",
        ),
        (
            {
                "kind": "delegated",
                "principal": "bob",
                "decision": "delegate",
                "note": "dana",
                "payload": {"decision": "delegate", "delegateTo": "dana"},
            },
            MANAGER,
            "Bob Baker handed it to Dana Diaz.",
        ),
        (
            {"kind": "expired", "step": "manager", "note": "expired at 2026-05-02T09:00:00Z"},
            MANAGER,
            "Nobody answered in time: step manager expired.",
        ),
        ({"kind": "escalated", "principal": "dana"}, MANAGER, "Escalated to Dana Diaz."),
        (
            {"kind": "refused", "principal": "carol", "note": "carol already counted in this step"},
            FINANCE,
            "Carol Chen's answer did not count: carol already counted in this step.",
        ),
        (
            {"kind": "refused", "principal": "carol", "note": "offer failed: LIMIT_EXCEEDED"},
            FINANCE,
            "The request could not reach Carol Chen's inbox.",
        ),
        ({"kind": "cancelled", "principal": "bob"}, MANAGER, "Bob Baker cancelled."),
        ({"kind": "completed", "decision": "approved"}, None, "The request was approved."),
        ({"kind": "completed", "decision": "rejected"}, None, "The request was rejected."),
        (
            {"kind": "escalated", "principal": "group:finance"},
            None,
            "Escalated to the finance group.",
        ),
    ],
)
def test_each_kind_is_a_sentence(
    fields: dict[str, Any], step: StepView | None, expected: str
) -> None:
    assert sentence(entry(**fields), NAMES, step) == expected


@pytest.mark.parametrize("kind", get_args(AuditKind))
def test_every_audit_kind_has_its_own_sentence(kind: str) -> None:
    """No kind of the contract falls back to the sentence for kinds it does not know."""
    text = sentence(entry(kind, principal="bob", step="manager"), NAMES, MANAGER)
    assert text != f"{kind.capitalize()} (Bob Baker).", text


def test_a_reminder_is_a_sentence() -> None:
    reminder = ReminderView(at=AT, step="finance", principals=["carol", "dave"])
    assert reminder_sentence(reminder, NAMES) == "Reminder sent to Carol Chen and dave."


def test_a_long_comment_is_cut_and_no_python_value_is_printed() -> None:
    text = sentence(
        entry(
            "decision",
            principal="bob",
            decision="approve",
            payload={"decision": "approve", "comment": "x" * 5000},
        ),
        {},
    )
    assert text.startswith("bob approved, note: 'xxx") and text.endswith("…'.")
    assert len(text) < 400


def test_the_chains_sentences_name_no_ids_and_no_lists() -> None:
    chain = ChainView(
        chain_id="expense-call_abc123",
        title="expense 42 EUR for taxi",
        requester="alice",
        steps=[MANAGER],
        audit=[
            entry("submitted", principal="alice", payload={"amount": 42}),
            entry("step", step="manager", note="started: 1 of ['bob']"),
            entry("offered", step="manager", principal="bob", interrupt_id="int-9f8e"),
            entry(
                "decision",
                step="manager",
                principal="bob",
                interrupt_id="int-9f8e",
                decision="approve",
                run_id="run-77",
                payload={"decision": "approve"},
            ),
            entry("step", step="manager", decision="approved"),
            entry("completed", decision="approved"),
        ],
    )
    said = sentences(chain, NAMES)
    assert said == [
        "Alice Adams submitted the request.",
        "Step manager started: 1 of Bob Baker must approve.",
        "Offered to Bob Baker.",
        "Bob Baker approved.",
        "Step manager was approved.",
        "The request was approved.",
    ]
    for text in said:
        assert not any(s in text for s in ("[", "]", "int-", "run-", "expense-", "inbox:")), text


def test_a_kind_newer_than_the_sentences_is_still_a_sentence() -> None:
    fields: dict[str, Any] = {"at": AT, "kind": "archived", "principal": "bob"}
    future = AuditEntryView.model_construct(**fields)  # a newer worker's entry, unchecked
    assert sentence(future, NAMES) == "Archived (Bob Baker)."
