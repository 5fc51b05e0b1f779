"""What the examples' offline models say, whichever framework runs them: a `sendEmail` call
for "Send an email to ada@example.com saying hi", a sentence about the call's result, or
what they can do. Each model (`email_graph_model`, `openai_email_model`, `adk_email_model`)
puts it in its framework's own types."""

from __future__ import annotations

import json
import re
from typing import Any

HELP = 'I can send an email ("Send an email to ada@example.com saying hi").'
EMAIL = re.compile(
    r"\bemail\s+to\s+(?P<to>[^\s@]{1,64}@[^\s@]{1,190})(?:\s+saying\s+(?P<body>.{1,500}))?",
    re.IGNORECASE,
)


def email_asked(text: str) -> dict[str, Any] | None:
    """The `sendEmail` arguments a user message asks for, if it asks for an email."""
    found = EMAIL.search(text)
    if found is None:
        return None
    to, body = found["to"].rstrip(".,;"), (found["body"] or "hello").strip()
    return {"to": to, "subject": body[:40].capitalize(), "body": body}


def said(result: Any) -> str:
    """The sentence about a `sendEmail` call's result (its JSON, or what came instead)."""
    try:
        sent = json.loads(result) if isinstance(result, str) else result
    except ValueError:
        return f"I did not send the email: {result}."
    if isinstance(sent, dict) and sent.get("sent"):
        return f"Sent the email to {sent['to']}."
    if isinstance(sent, dict) and sent.get("error"):
        return f"I did not send the email: {sent['error']}."
    return result if isinstance(result, str) else json.dumps(result)


def words(text: str) -> list[str]:
    """`text` in the pieces a model streams it in: a word and the space after it."""
    return re.findall(r"\S+\s*|\s+", text) or [text]
