"""A chain's audit trail in sentences: what `GET /approvals/{chain}` shows a person.

Pure (no I/O): the gateway and the tests turn each `AuditEntryView` (and each reminder)
into one sentence with the principals' display names (`names`, principal -> name; a
principal without one is shown as it is). Internal ids (interrupts, runs, chains) are
never part of a sentence, and no Python value is printed as Python writes it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ag_ui_temporal.workflows.contract.access import GROUP_PREFIX
from ag_ui_temporal.workflows.contract.chains import (
    AuditEntryView,
    ChainView,
    ReminderView,
    StepView,
)

Names = Mapping[str, str]
QUOTED_MAX = 300
"""The most characters of an approver's comment (or a reason) a sentence quotes."""
VIA = {"link": " (by link)", "api": " (through the API)", "cli": " (from the command line)"}
"""How an answer came, when not in a chat (the entry's `via`)."""
OFFER_FAILED = "offer failed: "
"""How the chain notes an offer the inbox refused (the rest is the cause)."""
_STARTED = re.compile(r"started: ([0-9]{1,6}) of ")
"""The quorum a step started with, as the chain wrote it (the step's own may have changed
since: an escalation sets a new one)."""


def display(principal: str | None, names: Names) -> str:
    """A principal as a person reads it: its display name, `the G group` for `group:G`."""
    if not principal:
        return "someone"
    if principal in names:
        return names[principal]
    if principal.startswith(GROUP_PREFIX):
        return f"the {principal.removeprefix(GROUP_PREFIX)} group"
    return principal


def listing(principals: Sequence[str], names: Names) -> str:
    """`Bob`, `Bob and Carol`, `Carol, Dave and Erin`."""
    shown = [display(p, names) for p in principals]
    if len(shown) <= 1:
        return "".join(shown) or "nobody"
    return f"{', '.join(shown[:-1])} and {shown[-1]}"


def sentence(entry: AuditEntryView, names: Names, step: StepView | None = None) -> str:
    """One audit entry as a sentence; `step` (the entry's step, when known) says who may
    approve it when it started."""
    return _KINDS.get(entry.kind, _other)(entry, names, step)


def sentences(chain: ChainView, names: Names) -> list[str]:
    """Every audit entry of `chain` as a sentence, in order."""
    steps = {step.name: step for step in chain.steps}
    return [sentence(e, names, steps.get(e.step or "")) for e in chain.audit]


def reminder_sentence(reminder: ReminderView, names: Names) -> str:
    """`Reminder sent to Bob.`"""
    return f"Reminder sent to {listing(reminder.principals, names)}."


def _quoted(text: str) -> str:
    text = " ".join(text.split())  # one line, whatever the approver typed
    if len(text) > QUOTED_MAX:
        text = text[: QUOTED_MAX - 1] + "…"
    return f"'{text}'"


def _via(entry: AuditEntryView) -> str:
    return VIA.get(entry.via or "", "")


def _comment(entry: AuditEntryView) -> str:
    payload: Any = entry.payload
    comment = payload.get("comment") if isinstance(payload, dict) else None
    return f", note: {_quoted(comment)}" if isinstance(comment, str) and comment.strip() else ""


def _who(entry: AuditEntryView, names: Names) -> str:
    return display(entry.principal, names)


def _submitted(entry: AuditEntryView, names: Names, step: StepView | None) -> str:
    if not entry.principal:
        return "The request was submitted."
    return f"{_who(entry, names)} submitted the request."


def _step(entry: AuditEntryView, names: Names, step: StepView | None) -> str:
    name = entry.step or "?"
    if entry.decision:
        return f"Step {name} was {entry.decision}."
    if step is None:
        return f"Step {name} started."
    if not step.approvers:
        return f"Step {name} started with nobody who may approve it."
    started = _STARTED.match(entry.note or "")
    quorum = int(started.group(1)) if started else step.quorum
    return f"Step {name} started: {quorum} of {listing(step.approvers, names)} must approve."


def _offered(entry: AuditEntryView, names: Names, step: StepView | None) -> str:
    return f"Offered to {_who(entry, names)}."


def _decision(entry: AuditEntryView, names: Names, step: StepView | None) -> str:
    verb = {"approve": "approved", "reject": "rejected"}.get(entry.decision or "", "answered")
    return f"{_who(entry, names)} {verb}{_via(entry)}{_comment(entry)}."


def _delegated(entry: AuditEntryView, names: Names, step: StepView | None) -> str:
    to = display(entry.note, names) if entry.note else "someone else"
    return f"{_who(entry, names)} handed it to {to}{_via(entry)}{_comment(entry)}."


def _expired(entry: AuditEntryView, names: Names, step: StepView | None) -> str:
    return f"Nobody answered in time: step {entry.step or '?'} expired."


def _escalated(entry: AuditEntryView, names: Names, step: StepView | None) -> str:
    return f"Escalated to {_who(entry, names)}."


def _reminded(entry: AuditEntryView, names: Names, step: StepView | None) -> str:
    return f"Reminder sent to {_who(entry, names)}."


def _refused(entry: AuditEntryView, names: Names, step: StepView | None) -> str:
    note = entry.note or ""
    if note.startswith(OFFER_FAILED):
        return f"The request could not reach {_who(entry, names)}'s inbox."
    why = f": {' '.join(note.split())[:QUOTED_MAX]}" if note else ""
    return f"{_who(entry, names)}'s answer did not count{why}{_via(entry)}."


def _cancelled(entry: AuditEntryView, names: Names, step: StepView | None) -> str:
    return f"{_who(entry, names)} cancelled{_via(entry)}."


def _completed(entry: AuditEntryView, names: Names, step: StepView | None) -> str:
    return f"The request was {entry.decision or 'closed'}."


def _other(entry: AuditEntryView, names: Names, step: StepView | None) -> str:
    """A kind newer than this module: still a sentence, never a raw value."""
    who = f" ({_who(entry, names)})" if entry.principal else ""
    return f"{str(entry.kind).replace('_', ' ').capitalize()}{who}."


_KINDS: dict[str, Callable[[AuditEntryView, Names, StepView | None], str]] = {
    "submitted": _submitted,
    "step": _step,
    "offered": _offered,
    "decision": _decision,
    "delegated": _delegated,
    "expired": _expired,
    "escalated": _escalated,
    "reminded": _reminded,
    "refused": _refused,
    "cancelled": _cancelled,
    "completed": _completed,
}
"""Keyed by the kind's text, so a kind the contract adds later falls back to `_other`."""
