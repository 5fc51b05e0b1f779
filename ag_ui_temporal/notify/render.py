"""What a notice says: a subject, a plain text, an HTML email and the webhook's JSON body.

Texts are for people: sentences with display names, the deadline in words, and no internal
ids (an interrupt's id, `inbox:bob`, a chain's id) — a chain's seat is described by its
title and step, never by the inbox question, which names the chain's id. Everything that a
producer or a chain wrote (titles, messages, steps, names) is bounded (`MAX_SHOWN`), rid of
bidirectional controls (`BIDI_CONTROLS`) and, in the HTML, escaped: the email and the chat
channels send these texts as they are. The webhook body is for programs: every field as it
was written, ids included, beside the texts.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ag_ui_temporal.notify.directory import Person
from ag_ui_temporal.workflows.contract.notices import Notice, NoticeKind

MAX_SHOWN = 500
"""The most characters of one producer-written text (a message, a title) a text shows."""
MAX_NAME_SHOWN = 100
"""The most characters of a name or a step a text shows."""
MAX_SUBJECT = 150
"""The longest subject line."""
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""Invisible characters that reorder the text around them (embeddings, overrides, isolates,
marks): a title holding U+202E shows `Approve: refund 9000 EUR` as what it is not. Left out
of everything a text shows."""
_WITHOUT_BIDI = dict.fromkeys(map(ord, BIDI_CONTROLS))

WEBHOOK_TYPES: dict[NoticeKind, str] = {
    "waiting": "interrupt.waiting",
    "reminder": "interrupt.reminder",
    "escalated": "interrupt.escalated",
    "delegated": "interrupt.delegated",
    "outcome": "chain.outcome",
}
"""The webhook body's `type`, per notice kind (Standard Webhooks: `group.event`)."""

_OUTCOMES = {"approved": "approved", "rejected": "rejected", "cancelled": "cancelled"}
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True)
class Links:
    """Where the person acts: their inbox, and one-click decisions when the interrupt
    takes them (`notify.links`)."""

    inbox: str
    approve: str | None = None
    reject: str | None = None


@dataclass(frozen=True)
class Message:
    """One notice, rendered for one person, for every channel."""

    subject: str
    text: str
    """The plain text of the email and the chat message."""
    html: str
    """The HTML part of the email."""
    body: dict[str, Any]
    """The webhook's JSON body."""


@dataclass(frozen=True)
class _Draft:
    """The parts both texts are made of, so the plain text and the HTML say the same."""

    subject: str
    lead: str
    quote: str | None
    deadline: str | None


def render(
    notice: Notice,
    person: Person,
    links: Links,
    names: Mapping[str, str],
    *,
    now: datetime | None = None,
) -> Message:
    """The notice as `person` reads it; `names` gives the others' display names."""
    draft = _draft(notice, person, names)
    return Message(
        subject=draft.subject,
        text=_text(draft, links),
        html=_html(draft, links),
        body=_body(notice, person, links, draft, now or datetime.now(UTC)),
    )


def _draft(notice: Notice, person: Person, names: Mapping[str, str]) -> _Draft:
    you = _line(person.display, MAX_NAME_SHOWN)
    asker = _who(notice.requester, names)
    step = f" (step: {_line(notice.step, MAX_NAME_SHOWN)})" if notice.step else ""
    chain = notice.chain_id is not None or notice.title is not None
    quote = None
    if chain:
        # never the seat's question: it names the chain's id
        item = _capital(_line(notice.title or "", MAX_SHOWN)) or "A request"
        about = f"{item}{f' from {asker}' if asker else ''}{step}"
    else:
        item = _line(notice.message, 80) or "A question"
        about = "a question"
        quote = _clip(notice.message, MAX_SHOWN) or None
    kind = notice.kind
    if kind == "waiting" and chain and asker:
        subject, lead = f"{asker} asks you to approve: {item}", f"{asker} asks you to approve: "
        lead += f"{item}{step}."
    elif kind == "waiting" and chain:
        subject, lead = f"Approval needed: {item}", f"your approval is needed: {item}{step}."
    elif kind == "waiting":
        subject, lead = f"Waiting for your answer: {item}", "a question waits for your answer."
    elif kind == "reminder":
        subject, lead = f"Reminder: {item} still waits for you", f"reminder: {about} still "
        lead += "waits for you."
    elif kind == "escalated":
        subject = f"Escalated to you: {item}"
        lead = f"{about} came to you because nobody answered in time."
    elif kind == "delegated":
        giver = _who(notice.delegated_from, names) or "Someone"
        subject, lead = f"{giver} handed you: {item}", f"{giver} handed you {about}."
    else:
        word = _OUTCOMES.get(notice.outcome or "", "decided")
        subject, lead = f"Your request {item} was {word}", f"your request {item} was {word}."
    deadline = None if kind == "outcome" else _when(notice.expires_at)
    return _Draft(_line(subject, MAX_SUBJECT), f"{you}, {lead}", quote, deadline)


def _text(draft: _Draft, links: Links) -> str:
    parts = [draft.lead]
    if draft.quote:
        parts.append(draft.quote)
    if draft.deadline:
        parts.append(f"Answer by {draft.deadline}.")
    if links.approve and links.reject:
        parts.append(f"Approve: {links.approve}\nReject: {links.reject}")
    parts.append(f"Open your inbox: {links.inbox}")
    return "\n\n".join(parts) + "\n"


_BUTTON = (
    "display:inline-block;padding:8px 16px;margin-right:8px;border-radius:4px;"
    "color:#ffffff;text-decoration:none;background:{}"
)


def _html(draft: _Draft, links: Links) -> str:
    e = html.escape
    parts = [f"<p>{e(draft.lead)}</p>"]
    if draft.quote:
        parts.append(
            '<blockquote style="white-space:pre-wrap;border-left:3px solid #cccccc;'
            f'margin:0 0 1em 0;padding-left:12px">{e(draft.quote)}</blockquote>'
        )
    if draft.deadline:
        parts.append(f"<p>Answer by <strong>{e(draft.deadline)}</strong>.</p>")
    if links.approve and links.reject:
        # links, not forms: the page they open asks before anything is decided
        approve = f'<a href="{e(links.approve)}" style="{_BUTTON.format("#1a7f37")}">Approve</a>'
        reject = f'<a href="{e(links.reject)}" style="{_BUTTON.format("#b42318")}">Reject</a>'
        parts.append(f"<p>{approve} {reject}</p>")
    parts.append(f'<p><a href="{e(links.inbox)}">Open your inbox</a></p>')
    body = "\n".join(parts)
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"></head>\n'
        f'<body style="font-family:sans-serif;line-height:1.5">\n{body}\n</body></html>\n'
    )


def _body(
    notice: Notice, person: Person, links: Links, draft: _Draft, now: datetime
) -> dict[str, Any]:
    interrupt = None
    if notice.interrupt_id is not None:
        interrupt = {
            "id": notice.interrupt_id,
            "reason": notice.reason,
            "message": notice.message,
            "expiresAt": notice.expires_at,
        }
    chain = None
    if notice.chain_id is not None:
        chain = {
            "id": notice.chain_id,
            "title": notice.title,
            "step": notice.step,
            "requester": notice.requester,
            "outcome": notice.outcome,
        }
    return {
        "type": WEBHOOK_TYPES[notice.kind],
        "timestamp": _iso(now),
        "data": {
            "key": notice.key,
            "principal": notice.principal,
            "person": {"name": person.name, "email": person.email},
            "interrupt": interrupt,
            "threadId": notice.thread_id,
            "chain": chain,
            "delegatedFrom": notice.delegated_from,
            "links": {"inbox": links.inbox, "approve": links.approve, "reject": links.reject},
            "subject": draft.subject,
            "text": _text(draft, links),
        },
    }


def _who(principal: str | None, names: Mapping[str, str]) -> str | None:
    return _line(names.get(principal) or principal, MAX_NAME_SHOWN) if principal else None


def _clip(text: str, limit: int) -> str:
    """At most `limit` characters, an ellipsis where it was cut, no `BIDI_CONTROLS`: every
    text written by someone else (a producer, a chain, a directory) passes here."""
    text = text.translate(_WITHOUT_BIDI).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _line(text: str, limit: int) -> str:
    """One line (every run of whitespace, line breaks included, is one space), bounded."""
    return _clip(" ".join(text[: limit * 4].split()), limit)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _when(expires_at: str | None) -> str | None:
    """`Fri 4 Dec 2026, 09:00 UTC` (English whatever the locale), or None."""
    if not expires_at:
        return None
    try:
        when = datetime.fromisoformat(expires_at)
    except ValueError:
        return None
    when = (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC)
    day, month = _DAYS[when.weekday()], _MONTHS[when.month - 1]
    return f"{day} {when.day} {month} {when.year}, {when:%H:%M} UTC"


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
