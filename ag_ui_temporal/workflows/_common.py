"""Small helpers every workflow here shares: ids, timestamps, when to continue as new.

All are deterministic in workflow code: ids come from `workflow.uuid4()` (seeded
per workflow run), so a replay generates the same ids in the same order.
"""

from __future__ import annotations

from datetime import datetime

from temporalio import workflow


def new_id(prefix: str) -> str:
    """A replay-stable id such as `int-0123456789abcdef` (one `workflow.uuid4()` call)."""
    return f"{prefix}-{workflow.uuid4().hex[:16]}"


def iso(moment: datetime) -> str:
    """An instant as the wire writes it: ISO 8601 to the millisecond, UTC as `Z`."""
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def should_continue_as_new(history_limit: int) -> bool:
    """The server suggests it, or the history is longer than `history_limit` events."""
    info = workflow.info()
    return info.is_continue_as_new_suggested() or info.get_current_history_length() > history_limit
