"""What a notice says: each kind's subject and sentences, the deadline in words, the links,
no internal ids in what people read, producer text bounded and escaped, and the webhook's
JSON body."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from ag_ui_temporal.notify.directory import Person
from ag_ui_temporal.notify.render import MAX_SHOWN, Links, Message, render
from ag_ui_temporal.workflows.contract.chains import APPROVAL_REASON
from ag_ui_temporal.workflows.contract.notices import Notice

NAMES = {"alice": "Alice Adams", "bob": "Bob Baker", "carol": "Carol Chen"}
BOB = Person(principal="bob", name="Bob Baker", email="bob@example.com")
INTERRUPT = "int-7f3a9c"
CHAIN = "expense-call_4b1d"
LINKS = Links(
    inbox="https://approvals.example.com/?view=inbox",
    approve="https://approvals.example.com/decisions/tok-approve",
    reject="https://approvals.example.com/decisions/tok-reject",
)


def seat(kind: str = "waiting", **fields: Any) -> Notice:
    """A chain seat's notice, as the notify room makes them (the question names the chain)."""
    base: dict[str, Any] = {
        "key": f"{INTERRUPT}:bob:{kind}",
        "kind": kind,
        "principal": "bob",
        "thread_id": "inbox:bob",
        "interrupt_id": INTERRUPT,
        "reason": APPROVAL_REASON,
        "message": f"Approve expense 2400 EUR from alice? (step 'manager' of chain {CHAIN})",
        "expires_at": "2026-12-04T09:00:00Z",
        "chain_id": CHAIN,
        "title": "expense 2400 EUR for the Berlin trip",
        "step": "manager",
        "requester": "alice",
    }
    return Notice.model_validate({**base, **fields})


def assert_no_ids(message: Message) -> None:
    for text in (message.subject, message.text, message.html):
        for internal in ("inbox:bob", "inbox:alice", INTERRUPT, CHAIN, "call_"):
            assert internal not in text, (internal, text)


def test_waiting_asks_by_name_with_the_deadline_and_both_links():
    message = render(seat(), BOB, LINKS, NAMES)
    assert (
        message.subject == "Alice Adams asks you to approve: Expense 2400 EUR for the Berlin trip"
    )
    assert message.text.startswith(
        "Bob Baker, Alice Adams asks you to approve: "
        "Expense 2400 EUR for the Berlin trip (step: manager).\n"
    )
    assert "Answer by Fri 4 Dec 2026, 09:00 UTC." in message.text
    assert f"Approve: {LINKS.approve}\nReject: {LINKS.reject}" in message.text
    assert message.text.rstrip().endswith(f"Open your inbox: {LINKS.inbox}")
    assert f'<a href="{LINKS.approve}"' in message.html
    assert f'<a href="{LINKS.reject}"' in message.html
    assert f'<a href="{LINKS.inbox}">Open your inbox</a>' in message.html
    assert "<form" not in message.html  # links: the page they open asks first
    assert "Fri 4 Dec 2026, 09:00 UTC" in message.html
    assert_no_ids(message)


def test_without_decision_links_only_the_inbox_is_linked():
    message = render(seat(), BOB, Links(inbox=LINKS.inbox), NAMES)
    assert "Approve:" not in message.text and "Reject:" not in message.text
    assert message.html.count("<a href=") == 1
    assert f"Open your inbox: {LINKS.inbox}" in message.text
    assert message.body["data"]["links"] == {"inbox": LINKS.inbox, "approve": None, "reject": None}


@pytest.mark.parametrize(
    ("kind", "extra", "subject", "sentence"),
    [
        (
            "reminder",
            {},
            "Reminder: Expense 2400 EUR for the Berlin trip still waits for you",
            "Bob Baker, reminder: Expense 2400 EUR for the Berlin trip from Alice Adams "
            "(step: manager) still waits for you.",
        ),
        (
            "escalated",
            {},
            "Escalated to you: Expense 2400 EUR for the Berlin trip",
            "Bob Baker, Expense 2400 EUR for the Berlin trip from Alice Adams (step: manager) "
            "came to you because nobody answered in time.",
        ),
        (
            "delegated",
            {"delegated_from": "carol"},
            "Carol Chen handed you: Expense 2400 EUR for the Berlin trip",
            "Bob Baker, Carol Chen handed you Expense 2400 EUR for the Berlin trip from "
            "Alice Adams (step: manager).",
        ),
    ],
)
def test_each_kind_says_why_it_came(kind: str, extra: dict[str, Any], subject: str, sentence: str):
    message = render(seat(kind, **extra), BOB, LINKS, NAMES)
    assert message.subject == subject
    assert message.text.startswith(sentence + "\n")
    assert "Answer by Fri 4 Dec 2026, 09:00 UTC." in message.text
    assert_no_ids(message)
    assert message.body["type"] == f"interrupt.{kind}"


def test_the_outcome_tells_the_requester():
    alice = Person(principal="alice", name="Alice Adams")
    notice = seat(
        "outcome",
        principal="alice",
        key=f"{CHAIN}:alice:outcome",
        thread_id="t-alice-chat",
        interrupt_id=None,
        reason=None,
        message="",
        expires_at=None,
        step=None,
        outcome="approved",
    )
    message = render(notice, alice, Links(inbox=LINKS.inbox), NAMES)
    assert message.subject == "Your request Expense 2400 EUR for the Berlin trip was approved"
    assert message.text.startswith(
        "Alice Adams, your request Expense 2400 EUR for the Berlin trip was approved.\n"
    )
    assert "Answer by" not in message.text
    assert_no_ids(message)
    assert message.body["type"] == "chain.outcome"
    assert message.body["data"]["interrupt"] is None
    assert message.body["data"]["chain"]["outcome"] == "approved"


def test_names_fall_back_to_the_principal():
    dave = Person(principal="dave")
    message = render(seat(requester="zoe"), dave, LINKS, {})
    assert message.text.startswith("dave, zoe asks you to approve: ")


def test_a_producer_question_shows_its_message_bounded_and_escaped():
    long = "<script>alert('x')</script> Ship order #42 to the <b>new</b> address? " + "x" * 3000
    notice = Notice(
        key=f"{INTERRUPT}:bob:waiting",
        kind="waiting",
        principal="bob",
        thread_id="orders-42",
        interrupt_id=INTERRUPT,
        reason="confirmation",
        message=long[:2000],
        expires_at="2026-12-04T09:00:00+00:00",
    )
    message = render(notice, BOB, LINKS, NAMES)
    assert message.text.startswith("Bob Baker, a question waits for your answer.\n")
    assert message.subject.startswith("Waiting for your answer: <script>alert('x')</script>")
    assert len(message.subject) <= 150
    quoted = message.text.split("\n\n")[1]
    assert quoted.startswith("<script>") and quoted.endswith("…")
    assert len(quoted) == MAX_SHOWN
    assert "<script>" not in message.html and "<b>" not in message.html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in message.html
    assert INTERRUPT not in message.text and INTERRUPT not in message.html
    # the body carries the whole message (programs read it, bounded by the contract)
    assert message.body["data"]["interrupt"]["message"] == long[:2000]


def test_a_title_or_name_cannot_break_lines_or_markup():
    evil = Person(principal="bob", name="Bob <img src=x onerror=alert(1)>")
    notice = seat(title="big\r\nBcc: everyone@example.com <i>", step="<step>")
    message = render(notice, evil, LINKS, NAMES)
    assert "\r" not in message.subject and "\n" not in message.subject
    assert message.subject.endswith("Big Bcc: everyone@example.com <i>")
    assert "<img" not in message.html and "<i>" not in message.html and "<step>" not in message.html
    assert "&lt;img src=x onerror=alert(1)&gt;" in message.html


BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
"""Every character that reorders text: embeddings, overrides, isolates, marks."""


@pytest.mark.parametrize("question", [False, True])
def test_no_text_holds_a_character_that_reorders_it(question: bool):
    """`refund \u202eRUE 0009` reads `refund 9000 EUR`: none of those characters is shown,
    from a title, a step, a question, a name or the person's own name."""
    spoof = "refund \u202eRUE 0009\u202c " + BIDI
    notice = seat(title=spoof, step=f"\u2067{spoof}\u2069", requester="mallory")
    if question:
        notice = notice.model_copy(update={"chain_id": None, "title": None, "message": spoof})
    who = Person(principal="bob", name=f"Bob\u202e{BIDI}")
    message = render(notice, who, LINKS, {"mallory": f"Mallory \u202e{BIDI}"})
    for text in (message.subject, message.text, message.html):
        assert not set(BIDI) & set(text), text
    assert "RUE 0009" in message.subject  # the words stay, in the order they were written
    data = message.body["data"]
    assert not set(BIDI) & set(data["subject"] + data["text"])


def test_an_unreadable_deadline_is_left_out():
    assert "Answer by" not in render(seat(expires_at="next week"), BOB, LINKS, NAMES).text
    naive = render(seat(expires_at="2027-01-01T18:30:00"), BOB, LINKS, NAMES)  # read as UTC
    assert "Answer by Fri 1 Jan 2027, 18:30 UTC." in naive.text


def test_the_webhook_body():
    now = datetime(2026, 12, 2, 10, 0, 0, tzinfo=UTC)
    message = render(seat("delegated", delegated_from="carol"), BOB, LINKS, NAMES, now=now)
    assert message.body == {
        "type": "interrupt.delegated",
        "timestamp": "2026-12-02T10:00:00Z",
        "data": {
            "key": f"{INTERRUPT}:bob:delegated",
            "principal": "bob",
            "person": {"name": "Bob Baker", "email": "bob@example.com"},
            "interrupt": {
                "id": INTERRUPT,
                "reason": APPROVAL_REASON,
                "message": seat().message,
                "expiresAt": "2026-12-04T09:00:00Z",
            },
            "threadId": "inbox:bob",
            "chain": {
                "id": CHAIN,
                "title": "expense 2400 EUR for the Berlin trip",
                "step": "manager",
                "requester": "alice",
                "outcome": None,
            },
            "delegatedFrom": "carol",
            "links": {"inbox": LINKS.inbox, "approve": LINKS.approve, "reject": LINKS.reject},
            "subject": message.subject,
            "text": message.text,
        },
    }
