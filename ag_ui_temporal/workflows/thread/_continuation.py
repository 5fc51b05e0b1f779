"""A run id the thread has run already, sent again: the same run, a continuation, or refused.

- The same POST sent again (a reconnect, a retry, after continue-as-new when Temporal no
  longer knows its update id) is the run it sent: answered with that run's events. A body
  that brings nothing (`BRINGS_NOTHING`: a client re-attaching with what it has) is the
  newest run sent under the id. A run recorded before digests (`RunRecord.brings` None) is
  taken so for any body, as then.
- A resume sent under the id of the run that asked what it answers is a continuation:
  CopilotKit's `useInterrupt` pins the interrupted run's id on the wire. It is a run of its
  own (`ThreadLog.own_id`: its events, its record, the answers it applies), which the client
  sees under the id it sent (`ThreadState.sent_as`), decided by the contract rules as any
  resume: an answer applied already (by another tab's run, say) is rule 5's repeat, another
  answer to it `INTERRUPT_ALREADY_RESOLVED`.
- Any other body under a known run id is refused, `RUN_ID_REUSED`: never answered with the
  earlier run's events as if it had been applied.

Pure: the `run` update's validator decides with it (refusing without writing history) and
its handler again.
"""

from __future__ import annotations

from dataclasses import dataclass

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.workflows.contract import ErrorCode, RunRejection, RunRequest, run_digest
    from ag_ui_temporal.workflows.contract.runs import BRINGS_NOTHING
    from ag_ui_temporal.workflows.thread.state import RunRecord

from ag_ui_temporal.workflows.thread._log import ThreadLog
from ag_ui_temporal.workflows.thread._resume import RunRejected


@dataclass(frozen=True)
class SentBefore:
    """What the thread knows of a run id sent to it again."""

    runs: list[RunRecord]
    """The runs sent under the id, oldest first: a run and its continuations."""
    again: RunRecord | None
    """The run this request is (the same body; or a run from before digests, for any body
    but a continuation's)."""
    continues: bool
    """The request continues a run sent under the id: a run of its own."""


def sent_before(log: ThreadLog, request: RunRequest) -> SentBefore | None:
    """None for a run id the thread has not run (or no longer remembers)."""
    runs = log.sent(request.run_id)
    if not runs:
        return None
    brings = run_digest(request)
    if brings == BRINGS_NOTHING:
        return SentBefore(runs, runs[-1], False)
    again = next((run for run in runs if run.brings == brings), None)
    continues = again is None and _continues(log, request, runs)
    if again is None and not continues:
        again = next((run for run in runs if run.brings is None), None)
    return SentBefore(runs, again, continues)


def _continues(log: ThreadLog, request: RunRequest, runs: list[RunRecord]) -> bool:
    """Whether the resume answers an interrupt that one of `runs` asked (or delivered). A
    re-send of such a run's own body never does: what a run answers was asked before it, and
    a run that brings an answer binds no interrupt to itself but those it asks or delivers."""
    ids = {run.run_id for run in runs}
    by_id = {record.id: record for record in log.state.interrupts}
    return any(
        (record := by_id.get(entry.interrupt_id)) is not None and record.run_id in ids
        for entry in request.resume
    )


def reused(request: RunRequest) -> RunRejected:
    return RunRejected(
        RunRejection(
            code=ErrorCode.RUN_ID_REUSED,
            message=(
                f"run id {request.run_id[:200]!r} was sent before with another body, and this "
                "one answers no interrupt that run asked: nothing was applied (send new input "
                "under a new run id)"
            ),
        )
    )
