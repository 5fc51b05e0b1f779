"""A run's AG-UI events, from the thread's log to the client's SSE stream.

Two entries: `run_stream` for the client that sent the run (after `gateway/runs.py` sent
its update) and `join_stream` for a client joining a run; `event_stream` writes either as
SSE. Underneath, in reading order:

- `thread_log.py`: reading a run's slice of the thread's log (`run_events` query); each
  event keeps its offset, its SSE `id`.
- `feeds.py`: one reader per followed run in this process, shared by all its clients.
- `streams.py`: the two entries (and a run read back from the archive: `archived.py`; a
  repeated resume of a run the thread let go: `replays.py`).
- `snapshots.py`: a `MESSAGES_SNAPSHOT` marker made whole (the archive + the window).
- `sse.py`: frames (`id:` then `data:`) and keepalive comments.

`streams.py` puts TanStack's interrupt bindings on every `RUN_FINISHED` (`gateway.tanstack`).
"""

from ag_ui_temporal.gateway.streaming.archived import archived_run
from ag_ui_temporal.gateway.streaming.feeds import RunFeeds
from ag_ui_temporal.gateway.streaming.replays import archived_replay
from ag_ui_temporal.gateway.streaming.snapshots import Snapshots
from ag_ui_temporal.gateway.streaming.sse import event_stream
from ag_ui_temporal.gateway.streaming.streams import (
    ForeignRun,
    archived_stream,
    join_stream,
    run_stream,
)
from ag_ui_temporal.gateway.streaming.thread_log import (
    Batch,
    Offset,
    find_thread,
    read_run,
    thread_handle,
    unobserved,
)

__all__ = [
    "Batch",
    "ForeignRun",
    "Offset",
    "RunFeeds",
    "Snapshots",
    "archived_replay",
    "archived_run",
    "archived_stream",
    "event_stream",
    "find_thread",
    "join_stream",
    "read_run",
    "run_stream",
    "thread_handle",
    "unobserved",
]
