"""Settled interrupts leaving the thread's state at continue-as-new, written to the store.

A repeated resume (same ids, same answers) is answered with the run that applied it. The
thread can do that while it holds the interrupt's record and the run's events: those of
its last runs (`RUNS_KEPT`). Older runs' events go to the store's archive; so do, here,
the records of the settled interrupts leaving with them (`ArchivedInterrupt`: who could
answer, a digest of the answer, the run that applied it), where the gateway finds them
when the thread no longer knows the ids (`workflows.contract.replay`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.workflows.contract.replay import (
        ARCHIVE_INTERRUPTS_ACTIVITY,
        ARCHIVE_INTERRUPTS_BATCH,
        ArchivedInterrupt,
        ArchiveInterrupts,
    )
    from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord

from ag_ui_temporal.workflows.thread._log import ThreadLog


def archived(
    record: InterruptRecord, sent_as: Callable[[str], str] = str
) -> ArchivedInterrupt | None:
    """What the store keeps of `record` (None: no answer was applied, nothing to replay): the
    run that delivered it by the id its client sent (`sent_as`), the run that applied the
    answer by its own (its events are archived under it)."""
    digest = record.answer_digest
    if digest is None or record.resolved_by_run is None:
        return None
    return ArchivedInterrupt(
        interrupt_id=record.id,
        run_id=sent_as(record.run_id),
        status=record.status,
        answer_digest=digest,
        resolved_by_run=record.resolved_by_run,
        allowed_resolvers=record.allowed_resolvers,
    )


def leaving(log: ThreadLog, keep: int) -> list[ArchiveInterrupts]:
    """The answered interrupts `log.trim(keep)` drops, in activity-sized batches."""
    sent_as = log.state.client_run_id
    leaving = log.leaving_interrupts(keep)
    records = [a for r in leaving if (a := archived(r, sent_as)) is not None]
    step = ARCHIVE_INTERRUPTS_BATCH
    return [
        ArchiveInterrupts(thread_id=log.state.thread_id, interrupts=records[i : i + step])
        for i in range(0, len(records), step)
    ]


async def archive_leaving(
    log: ThreadLog, keep: int, start_to_close: timedelta, retry: RetryPolicy
) -> None:
    """Write the leaving interrupts; those not written leave anyway: a repeat of their
    resume gets `UNKNOWN_INTERRUPT_ID`."""
    for batch in leaving(log, keep):
        try:
            await workflow.execute_activity(
                ARCHIVE_INTERRUPTS_ACTIVITY,
                batch,
                start_to_close_timeout=start_to_close,
                retry_policy=retry,
            )
        except ActivityError as err:
            thread_id = log.state.thread_id
            workflow.logger.warning("thread %s: interrupts not archived: %s", thread_id, err)
            return
