"""A repeated resume of a run that left the thread: answered from the store's archive.

The thread answers a repeated resume (same ids, same answers) with the run that applied it
while it holds the interrupts' records, those of its last 20 runs. Older ones it wrote to
the store as it let them go (`workflows.contract.replay`), so it refuses their ids with
`UNKNOWN_INTERRUPT_ID` (having checked the thread's owner first). Here, such a refusal is
looked up in the archive and decided by the thread's own rules: the archived run's events
re-addressed to the new run, or the refusal a recent run's repeat would get.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import SQLAlchemyError
from temporalio.service import RPCError

from ag_ui_temporal.gateway.streaming.archived import archived_run
from ag_ui_temporal.gateway.streaming.thread_log import Batch, Offset
from ag_ui_temporal.workflows.contract import OTHER_OWNER, ErrorCode, RunRejection, RunRequest
from ag_ui_temporal.workflows.contract.replay import (
    ArchivedInterrupt,
    interrupted_run,
    readdressed,
    replay_verdict,
)

if TYPE_CHECKING:
    from temporalio.client import WorkflowHandle

    from ag_ui_temporal.store import Transcript

log = logging.getLogger(__name__)

ARCHIVE_UNAVAILABLE = "the archive of the thread's earlier runs is unavailable; retry"


async def archived_replay(
    transcript: Transcript | None,
    handle: WorkflowHandle[Any, Any],
    request: RunRequest,
    rejection: RunRejection,
    after: int,
) -> Batch | RunRejection:
    """The answer to a resume the thread refused, once the archive was asked: the replayed
    run's events after offset `after`, or a refusal (the thread's, unless the archive
    decides otherwise; `UNAVAILABLE` when the store did not answer)."""
    ids = [entry.interrupt_id for entry in request.resume]
    if transcript is None or not _may_be_archived(rejection, ids):
        return rejection
    try:
        rows = await transcript.settled(request.thread_id, ids)
        archived = {row["interrupt_id"]: ArchivedInterrupt.model_validate(row) for row in rows}
        if not archived:
            return rejection  # never existed (or left before this archive did)
        if rejection.code == ErrorCode.FORBIDDEN:  # not the thread's owner: as for a recent run
            run_id = interrupted_run(archived, rejection.interrupt_errors)
            return rejection.model_copy(update={"interrupted_run_id": run_id})
        verdict = replay_verdict(request, archived)
        if isinstance(verdict, RunRejection):
            return verdict
        batch = await archived_run(transcript, handle, request.thread_id, verdict, after)
    except (SQLAlchemyError, OSError, RPCError) as err:
        log.warning("run %s: the archive did not answer: %r", request.run_id, err)
        return RunRejection(code=ErrorCode.UNAVAILABLE, message=ARCHIVE_UNAVAILABLE)
    if batch is None:
        return rejection  # the run's events were never archived: nothing to replay
    events = readdressed([item.event for item in batch], request.run_id, request.parent_run_id)
    return [Offset(event, item.offset) for event, item in zip(events, batch, strict=True)]


def _may_be_archived(rejection: RunRejection, ids: list[str]) -> bool:
    """Whether the thread refused every entry as unknown to it (or refused a principal not
    its owner before looking): the archive may know them."""
    if not ids or rejection.interrupted_run_id is not None:
        return False
    if rejection.code == ErrorCode.FORBIDDEN:
        return rejection.message == OTHER_OWNER
    errors = rejection.interrupt_errors
    return (
        rejection.code == ErrorCode.UNKNOWN_INTERRUPT_ID
        and all(error.code == ErrorCode.UNKNOWN_INTERRUPT_ID for error in errors)
        and sorted(error.interrupt_id or "" for error in errors) == sorted(ids)
    )
