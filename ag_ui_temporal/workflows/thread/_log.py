"""The thread's state and its append-only event log (the durability sink).

Every event gets an offset that never repeats, also across continue-as-new;
SSE ids, replays and joins all read this log.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.workflows.contract import InterruptStatus, WireDict
    from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord
    from ag_ui_temporal.workflows.thread.state import RunRecord, ThreadState

RUNS_KEPT = 20
"""Runs whose events survive continue-as-new (re-sent and replayed runs read them)."""


class ThreadLog:
    def __init__(self, state: ThreadState) -> None:
        self.state = state

    @property
    def next_offset(self) -> int:
        return self.state.events_start + len(self.state.events)

    def append(self, event: WireDict) -> None:
        self.state.events.append(event)

    def events_between(self, first: int, last: int) -> list[WireDict]:
        """Events with offsets in [first, last], those still retained."""
        start = max(first - self.state.events_start, 0)
        return self.state.events[start : last - self.state.events_start + 1]

    def run(self, run_id: str) -> RunRecord | None:
        """The run recorded under `run_id` (its own id: `sent` finds runs by the client's)."""
        return next((run for run in self.state.runs if run.run_id == run_id), None)

    def sent(self, run_id: str) -> list[RunRecord]:
        """The runs a client sent under `run_id`, oldest first: a run and its continuations."""
        sent_as = self.state.client_run_id
        return [run for run in self.state.runs if sent_as(run.run_id) == run_id]

    def own_id(self, run_id: str) -> str:
        """The id a new run the client sent as `run_id` is recorded under: `run_id`, unless a
        run the thread holds has it (the run a continuation continues): then `run_id~n`."""
        taken = {run.run_id for run in self.state.runs} | self.state.sent_as.keys()
        own, n = run_id, 0
        while own in taken:
            n += 1
            own = f"{run_id}~{n}"
        return own

    def interrupt(self, interrupt_id: str) -> InterruptRecord | None:
        return next((r for r in self.state.interrupts if r.id == interrupt_id), None)

    def open_interrupt(self, record: InterruptRecord) -> None:
        self.state.interrupts.append(record)

    def awaiting(self) -> list[InterruptRecord]:
        return [record for record in self.state.interrupts if record.awaiting_answer]

    def trim(self, keep: int = RUNS_KEPT) -> None:
        """Drop what continue-as-new need not carry: runs before the last `keep`, their
        events and interrupts."""
        runs = self.state.runs[-keep:]
        kept_runs = {run.run_id for run in runs}
        self.state.runs = runs
        if runs:
            cut = runs[0].first_offset - self.state.events_start
            self.state.events = self.state.events[max(cut, 0) :]
            self.state.events_start = max(runs[0].first_offset, self.state.events_start)
        self.state.interrupts = [r for r in self.state.interrupts if _kept(r, kept_runs)]
        named = kept_runs | {i.run_id for i in self.state.interrupts}
        named |= {i.resolved_by_run for i in self.state.interrupts if i.resolved_by_run}
        self.state.sent_as = {own: sent for own, sent in self.state.sent_as.items() if own in named}

    def leaving_interrupts(self, keep: int) -> list[InterruptRecord]:
        """The interrupts `trim(keep)` drops."""
        kept_runs = {run.run_id for run in self.state.runs[-keep:]}
        return [r for r in self.state.interrupts if not _kept(r, kept_runs)]


def _kept(record: InterruptRecord, kept_runs: set[str]) -> bool:
    """Whether continue-as-new carries `record`: unsettled, of a run it keeps, or with a
    stage of its life the audit trail lacks (a store that is down delays the trail)."""
    return (
        record.unaudited()
        or record.awaiting_answer
        or record.status == InterruptStatus.OFFERED
        or record.run_id in kept_runs
        or record.resolved_by_run in kept_runs
    )
