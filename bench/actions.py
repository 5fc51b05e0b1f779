"""Billable Temporal Cloud actions: counted from history events by the documented rules,
and read from the server's own `action` counter (which sees queries too)."""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent

if TYPE_CHECKING:  # the bench extra: not in the test venv, which checks the counting rules
    import aiohttp

E = EventType
ONE_ACTION = {
    E.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,  # client start, continue-as-new, child start
    E.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,  # update received by the worker
    E.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,  # signal (signal-with-start: this one only)
    E.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED,
    E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,  # activity started (its retries: below)
    E.EVENT_TYPE_TIMER_STARTED,
    E.EVENT_TYPE_WORKFLOW_EXECUTION_OPTIONS_UPDATED,
    E.EVENT_TYPE_NEXUS_OPERATION_SCHEDULED,
    E.EVENT_TYPE_NEXUS_OPERATION_CANCEL_REQUESTED,
}
VERSION_ATTRIBUTE = "TemporalChangeVersion"
LOCAL_ACTIVITY_MARKER = "core_local_activity"


def billable_actions(events: list[HistoryEvent]) -> int:
    """Temporal Cloud's billable actions recorded in `events`, by the rules of
    https://docs.temporal.io/cloud/actions (Temporal Cloud Actions, read 2026-12-01):

    - workflow started (client start, continue-as-new: the new run's start, child start), an
      update accepted (rejected ones never reach history, so are not seen here), a signal
      received, an activity scheduled, a timer started, workflow options updated, a Nexus
      operation scheduled or cancelled: 1 each (update-with-start is 2: the start and the
      update; signal-with-start that starts the workflow is 1 in all: its SIGNALED comes
      right after STARTED);
    - an activity's retries: `attempt - 1` on its ACTIVITY_TASK_STARTED;
    - a search-attribute upsert: 1, unless it only sets `TemporalChangeVersion` (what
      `workflow.patched` writes: exempt);
    - a child workflow's start initiated: 2 (the intent, and the attempt);
    - local activities: 1 per workflow task that recorded any (its markers), whatever their
      number;
    - a signal to another workflow is billed in the signaled history; it is counted here,
      where it is initiated, since the bench reads only the thread's history.

    Not in history, so not counted: queries (1 each, except `__temporal_workflow_metadata`)
    and activity heartbeats that reach the server; `server_counters` reads those from the
    server's own `action` metric where it is exposed."""
    total = 0
    tasks_with_local_activities: set[int] = set()
    previous = E.EVENT_TYPE_UNSPECIFIED
    for event in events:
        kind = event.event_type
        # signal-with-start that started the workflow: its start and signal are one action
        with_start = previous == E.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED
        previous = kind
        if kind == E.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED and with_start:
            continue
        if kind in ONE_ACTION:
            total += 1
        elif kind == E.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            total += max(event.activity_task_started_event_attributes.attempt - 1, 0)
        elif kind == E.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
            fields = event.upsert_workflow_search_attributes_event_attributes
            total += set(fields.search_attributes.indexed_fields) != {VERSION_ATTRIBUTE}
        elif kind == E.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
            total += 2
        elif kind == E.EVENT_TYPE_MARKER_RECORDED:
            marker = event.marker_recorded_event_attributes
            if marker.marker_name == LOCAL_ACTIVITY_MARKER:
                tasks_with_local_activities.add(marker.workflow_task_completed_event_id)
    return total + len(tasks_with_local_activities)


COUNTER = re.compile(
    r"^(action|persistence_requests|visibility_persistence_requests)\{([^}]*)\} (\S+)$", re.M
)
LABEL = re.compile(r'(\w+)="([^"]*)"')
KINDS = {"action": "action_type", "persistence_requests": "operation"}
WRITES = ("Create", "Update", "Upsert", "Record", "Delete", "Complete", "Append", "Conflict")
"""Persistence operations that write (the rest read)."""


def _key(metric: str, labels: dict[str, str]) -> str | None:
    if metric == "visibility_persistence_requests":
        return f"visibility:{labels.get('operation')}"
    if labels.get("namespace") != "default":  # the bench's namespace, not the system's
        return None
    return f"{metric.split('_')[0]}:{labels.get(KINDS[metric])}"


async def server_counters(http: aiohttp.ClientSession, metrics_url: str) -> dict[str, float]:
    """The server's `action` counter (billable actions by type, queries and heartbeats too) and
    its persistence requests by operation (visibility's too), once they stopped moving (the
    server publishes its metrics about once a second)."""
    last: dict[str, float] | None = None
    for _ in range(10):
        async with http.get(metrics_url) as response:
            text = await response.text()
        now: dict[str, float] = {}
        for metric, labels, value in COUNTER.findall(text):
            if key := _key(metric, dict(LABEL.findall(labels))):
                now[key] = now.get(key, 0.0) + float(value)
        if now == last:
            return now
        last = now
        await asyncio.sleep(1.2)
    return last or {}


def counted_since(before: dict[str, float], after: dict[str, float], per: int) -> dict[str, Any]:
    """Per job between two readings of `server_counters`: billable actions by type and in
    all, and the persistence's writes (history and visibility) by operation and in all."""
    spent = {k: (v - before.get(k, 0.0)) / per for k, v in after.items()}
    spent = {k: round(v, 2) for k, v in spent.items() if v > 0}
    actions = {k.split(":", 1)[1].split("_", 1)[-1]: v for k, v in spent.items() if k[0] == "a"}
    writes = {
        k.split(":", 1)[1]: v
        for k, v in spent.items()
        if not k.startswith("action:") and k.split(":", 1)[1].startswith(WRITES)
    }
    return {
        "actions": round(sum(actions.values()), 2),
        "actions_by_type": actions,
        "db_writes": round(sum(writes.values()), 2),
        "db_writes_by_op": writes,
    }
