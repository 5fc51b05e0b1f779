"""A tool call run as an activity (`Turn.call_tool`): what the activity is given and returns.

Any tool activity a thread's agent calls takes a `ToolCallInput` and returns a
`ToolCallOutput`; the activity is named after the tool. Data only: the sandbox shares it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class ToolCallInput(BaseModel):
    """One approved tool call to execute."""

    key: str
    """Idempotency key: the AG-UI `toolCallId`."""
    tool: str
    args: dict[str, Any]


class ToolCallOutput(BaseModel):
    result: dict[str, Any]
    first_time: bool
    """False when this key had already been executed (a retried or replayed attempt)."""
