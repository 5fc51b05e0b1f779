"""Sending audit records to the store, from workflow code (the thread's and the chain's).

The activity appends each record once per key, so a batch may be sent again (a retried
attempt, a replayed task, a flush that failed half-way): nothing is doubled. A store that
stays down makes a send give up after `GIVE_UP_AFTER`; the caller keeps what it did not
send and sends it again.

A send is `local` (a local activity, in the workflow task that made the change) or not (an
activity the workflow waits for in the background). A local send adds no workflow task and
no activity task: the server sees a marker in the task that happened anyway, instead of an
activity and the workflow task its result wakes. But that task's answer (a run's update)
waits for it, so it gets one attempt of at most `LOCAL_TIMEOUT`; what it did not store goes
the background way.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError
from temporalio.exceptions import TimeoutError as ActivityTimeout

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.workflows.contract.audit import (
        AUDIT_APPEND_ACTIVITY,
        MAX_BATCH_RECORDS,
        AuditBatch,
        AuditRecord,
        canonical,
    )

GIVE_UP_AFTER = timedelta(hours=1)
"""How long one send is retried (Temporal's retries add no history) before the caller hears
of it; it sends the rest again later."""
RETRY = RetryPolicy(maximum_interval=timedelta(seconds=30))
LOCAL_TIMEOUT = timedelta(seconds=1)
"""The longest a local send may hold its workflow task (a store's append takes milliseconds)."""
ONCE = RetryPolicy(maximum_attempts=1)
MAX_BATCH_BYTES = 256 * 1024
"""A batch's records stay under this (one record is at most a few tens of KiB: `bounded`)."""


def batches(records: list[AuditRecord]) -> Iterator[list[AuditRecord]]:
    """`records` in order, in batches of at most `MAX_BATCH_RECORDS` and `MAX_BATCH_BYTES`."""
    batch: list[AuditRecord] = []
    size = 0
    for record in records:
        length = len(canonical(record.model_dump(mode="json")))
        if batch and (len(batch) == MAX_BATCH_RECORDS or size + length > MAX_BATCH_BYTES):
            yield batch
            batch, size = [], 0
        batch.append(record)
        size += length
    if batch:
        yield batch


async def append(
    scope: str,
    readers: list[str],
    records: list[AuditRecord],
    task_queue: str | None = None,
    *,
    local: bool = False,
) -> int:
    """Send `records` of `scope` in order; return how many were stored (a prefix: a batch
    that failed stops the rest, so the trail never has a hole)."""
    sent = 0
    for batch in batches(records):
        send = AuditBatch(scope=scope, readers=readers, records=batch)
        try:
            if local:
                await workflow.execute_local_activity(
                    AUDIT_APPEND_ACTIVITY,
                    send,
                    start_to_close_timeout=LOCAL_TIMEOUT,
                    retry_policy=ONCE,
                )
            else:
                await workflow.execute_activity(
                    AUDIT_APPEND_ACTIVITY,
                    send,
                    task_queue=task_queue,
                    start_to_close_timeout=timedelta(seconds=30),
                    schedule_to_close_timeout=GIVE_UP_AFTER,
                    retry_policy=RETRY,
                )
        except (ActivityError, ActivityTimeout) as err:
            # A local send that timed out raises `ActivityError` when it happens, but its
            # marker replays as a bare `TimeoutError` (temporalio 1.35): both are one outcome,
            # or a replay would take another path than the run did (a nondeterminism error).
            cause = err.cause if isinstance(err, ActivityError) else None
            workflow.logger.warning("%s: audit records not stored yet: %s", scope, cause or err)
            return sent
        sent += len(batch)
    return sent
