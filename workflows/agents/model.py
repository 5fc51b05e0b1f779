"""The "model" behind the assistant: a small interface, and a scripted stand-in.

A real LLM plugs in by implementing `Model` with a `workflow.execute_activity`
call inside `respond` (model calls are I/O). The scripted model needs no
network and is deterministic, so it runs inline in the workflow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from temporalio import workflow

from workflows._patches import EXPENSE_PATCH
from workflows._turn import message_text
from workflows.contract import WireDict


@dataclass
class ModelReply:
    text: str | None = None
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """(tool name, arguments) pairs."""


class Model(Protocol):
    async def respond(self, messages: list[WireDict]) -> ModelReply:
        """The next assistant step for a transcript ending in a user message."""
        ...


EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
"""What counts as an address: `find_emails` returns exactly `re.findall(EMAIL, text)`."""
_LOCAL_PART = re.compile(r"[\w.+-]+")
_DOMAIN = re.compile(r"[\w-]+(?:\.[\w-]+)+")
EXPENSE = re.compile(
    r"\breimburse\s+([\d][\d,]*(?:\.\d+)?)\s*([A-Za-z]{3})?\b(?:\s+for\s+(.+?))?[.!]?$",
    flags=re.IGNORECASE | re.DOTALL,
)
HELP = (
    'I can send an email ("Send an email to ada@example.com saying hi"), send several '
    '("Send emails to ada@example.com, bob@example.com and cy@example.com") or '
    'file the quarterly report ("File the quarterly report").'
)


class ScriptedModel:
    """Understands the demo's sentences; answers anything else with help."""

    async def respond(self, messages: list[WireDict]) -> ModelReply:
        text = _last_user_text(messages)
        emails = find_emails(text)
        lowered = text.lower()
        expense = EXPENSE.search(text.strip())
        if expense and workflow.patched(EXPENSE_PATCH):
            amount = float(expense[1].replace(",", ""))
            return ModelReply(
                tool_calls=[
                    (
                        "submitExpense",
                        {
                            "amount": int(amount) if amount.is_integer() else amount,
                            "currency": (expense[2] or "EUR").upper(),
                            "description": (expense[3] or "expenses").strip(),
                        },
                    )
                ]
            )
        if "quarterly report" in lowered:
            return ModelReply(tool_calls=[("fileQuarterlyReport", {})])
        if "email" in lowered and emails:
            body = _body(text) or "Hello!"
            return ModelReply(
                tool_calls=[
                    (
                        "sendEmail",
                        {"to": to, "subject": "Message from your assistant", "body": body},
                    )
                    for to in emails
                ]
            )
        return ModelReply(text=HELP)


def find_emails(text: str) -> list[str]:
    """`re.findall(EMAIL, text)` in linear time (the pattern itself is quadratic: every start
    in a long run of word characters rescans the run for an '@' that never comes).

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
        position = domain.end()
    return found


def _last_user_text(messages: list[WireDict]) -> str:
    users = [message for message in messages if message.get("role") == "user"]
    return message_text(users[-1]) if users else ""


def _body(text: str) -> str | None:
    match = re.search(r"\bsaying\s+(.+)$", text, flags=re.IGNORECASE | re.DOTALL)
    return match.group(1).strip() if match else None
