"""The thread's transcript: the window the workflow keeps, the archive beyond it, the budgets.

A thread keeps only its newest messages (the *window*, at most `THREAD_WINDOW_BYTES` after a
run); older ones are written to the store's transcript archive by the
`ARCHIVE_MESSAGES_ACTIVITY` first, then dropped. `archived` counts them: the window's first
message is at position `archived`. A run's `MESSAGES_SNAPSHOT` is a marker in the log
(`SNAPSHOT_KEY`); the run's result and the `run_events` query fill it with the window and
`archived`, and the gateway prepends the archive before the client sees it.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from ag_ui_temporal.workflows.contract.names import WireDict

KIB = 1024

THREAD_WINDOW_BYTES = 256 * KIB
"""Most JSON bytes of messages a thread keeps after a run; beyond it, the oldest are
archived until the window is at most half of this (so a thread archives now and then,
not at every run)."""
MAX_MESSAGE_BYTES = 128 * KIB
"""Largest message (JSON bytes) a thread stores; a larger one is refused (422 /
`LIMIT_EXCEEDED`): it could never fit the window."""
MAX_RUN_MESSAGES_BYTES = 1024 * KIB
"""Most JSON bytes of new messages one run (one `run` update) may bring."""
MAX_WINDOW_BYTES = 1280 * KIB
"""Hard cap of the window: reached only while the archive cannot be written; new messages
that would pass it are refused (`LIMIT_EXCEEDED`) until it can."""
LOG_TAIL_BYTES = 256 * KIB
"""Most JSON bytes of events the thread's log carries across continue-as-new: the events of
its last 20 runs, or of fewer (at least the last) when theirs weigh more; the events of
the runs it drops go to the archive."""
ARCHIVE_BATCH_BYTES = 256 * KIB
"""Most JSON bytes of messages one archive activity carries."""

ARCHIVE_MESSAGES_ACTIVITY = "agui_archive_messages"
"""Writes messages leaving a thread's window to the store (idempotent: by position)."""

ARCHIVE_EVENTS_ACTIVITY = "agui_archive_events"
"""Writes the events of runs leaving a thread's log (at continue-as-new) to the store, where
a join of such a run (with `threadId`) reads them (idempotent: by offset)."""

SNAPSHOT_KEY = "ag-ui:snapshot"
"""Reserved key of a `MESSAGES_SNAPSHOT` marker: `{}` in the log (and in a result the
gateway asked unfilled), `{"archived": N, "threadId": T}` once filled with the window; the
gateway expands it and removes the key."""


class ArchiveMessages(BaseModel):
    """Input of the archive activity: messages at positions `first_seq`, `first_seq + 1`..."""

    thread_id: str
    first_seq: int
    messages: list[WireDict]


class ArchiveEvents(BaseModel):
    """Input of the events' archive activity: one run's events at `first_offset`, ..."""

    thread_id: str
    run_id: str
    first_offset: int
    events: list[WireDict]


def json_size(value: Any) -> int:
    """Bytes of `value` as compact JSON (how budgets are measured)."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def is_snapshot_marker(event: WireDict) -> bool:
    return event.get("type") == "MESSAGES_SNAPSHOT" and SNAPSHOT_KEY in event


def is_unfilled_marker(event: WireDict) -> bool:
    """A marker as the log holds it: the window still to be read from the thread."""
    return is_snapshot_marker(event) and "threadId" not in (event[SNAPSHOT_KEY] or {})


def filled_marker(
    marker: WireDict, messages: list[WireDict], archived: int, thread_id: str
) -> WireDict:
    """A snapshot `marker` filled with the thread's window (`messages`) and how many messages
    precede it in the archive: what the gateway expands into the whole `MESSAGES_SNAPSHOT`
    (`gateway.streaming.snapshots`). The one shape of a filled marker, whoever fills it: the
    thread (a run's result, a `run_events` page) or the gateway (from a `thread` query)."""
    filled = {"archived": archived, "threadId": thread_id}
    return {**marker, "messages": messages, SNAPSHOT_KEY: filled}
