"""The demo's sentences, read without a model: which tool calls a user message asks for.

Pure functions of the offline model (`demo.offline`). Every pattern here runs in linear
time (tests/workflows/test_untrusted_text.py).
"""

from __future__ import annotations

import re
from typing import Any

EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
"""What counts as an address: `find_emails` returns exactly `re.findall(EMAIL, text)`."""
_LOCAL_PART = re.compile(r"[\w.+-]+")
_DOMAIN = re.compile(r"[\w-]+(?:\.[\w-]+)+")
EXPENSE = re.compile(
    r"\breimburse\s+([\d][\d,]*(?:\.\d+)?)\s*([A-Za-z]{3})?\b(?:\s+for\s+(.+?))?[.!]?$",
    flags=re.IGNORECASE | re.DOTALL,
)
_SAYING = re.compile(r"\bsaying\s+(.+)$", flags=re.IGNORECASE | re.DOTALL)
HELP = (
    'I can send an email ("Send an email to ada@example.com saying hi"), send several '
    '("Send emails to ada@example.com, bob@example.com and cy@example.com") or '
    'file the quarterly report ("File the quarterly report").'
)
EMAIL_SUBJECT = "Message from your assistant"

ToolCall = tuple[str, dict[str, Any]]
"""(tool name, arguments)."""


def expense_args(text: str) -> dict[str, Any] | None:
    """`submitExpense`'s arguments when the text asks to reimburse an amount, else None."""
    expense = EXPENSE.search(text.strip())
    if expense is None:
        return None
    amount = float(expense[1].replace(",", ""))
    return {
        "amount": int(amount) if amount.is_integer() else amount,
        "currency": (expense[2] or "EUR").upper(),
        "description": (expense[3] or "expenses").strip(),
    }


class TooManyCalls(Exception):
    """A sentence asks for more tool calls than one response may make."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"more than {limit} calls")
        self.limit = limit


def report_or_email_calls(text: str, limit: int | None = None) -> list[ToolCall]:
    """The quarterly report, or one `sendEmail` per address of an email sentence, or none.

    With `limit`, a sentence naming more addresses raises `TooManyCalls` once the first
    address past it is found: no call is built for it, and the rest of the text is not read."""
    if "quarterly report" in text.lower():
        return [("fileQuarterlyReport", {})]
    if "email" not in text.lower():
        return []
    emails = find_emails(text, None if limit is None else limit + 1)
    if limit is not None and len(emails) > limit:
        raise TooManyCalls(limit)
    if not emails:
        return []
    body = saying(text) or "Hello!"
    return [("sendEmail", {"to": to, "subject": EMAIL_SUBJECT, "body": body}) for to in emails]


def find_emails(text: str, at_most: int | None = None) -> list[str]:
    """`re.findall(EMAIL, text)` (only its first `at_most` matches, with `at_most`) in linear
    time (the pattern itself is quadratic: every start in a long run of word characters
    rescans the run for an '@' that never comes).

    A run of local-part characters is an address only if an '@' and a domain follow its
    end, and every start inside the run shares that end, so a run is tried once, from its
    first character (or from where the previous address ended), just as findall would.
    """
    found: list[str] = []
    position = 0
    while (local := _LOCAL_PART.search(text, position)) is not None:
        at = local.end()
        domain = _DOMAIN.match(text, at + 1) if text.startswith("@", at) else None
        if domain is None:
            position = at  # an '@' or another separator: no address starts in this run
            continue
        found.append(text[local.start() : domain.end()])
        if len(found) == at_most:
            break
        position = domain.end()
    return found


def saying(text: str) -> str | None:
    """The email body: what follows "saying", if anything does."""
    match = _SAYING.search(text)
    return match.group(1).strip() if match else None
