"""The thread's interrupt counters, through the workflow's replay-safe metric meter.

A workflow may not do I/O, but `workflow.metric_meter()` is safe: nothing is
recorded while history replays, and it adds no command. The worker exports the
counters (`WORKER_METRICS_PORT`); open interrupts are opened minus settled.
"""

from __future__ import annotations

from collections.abc import Iterable

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.workflows.contract import PENDING_STATUSES
    from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord


class InterruptMeter:
    """Counts interrupts as they start waiting for someone and as they stop waiting."""

    def __init__(self, records: Iterable[InterruptRecord]) -> None:
        # carried over continue-as-new: already counted by the run that opened them
        self.pending = {r.id for r in records if r.status in PENDING_STATUSES}
        meter = workflow.metric_meter()
        self.opened = meter.create_counter(
            "agui_interrupts_opened", "interrupts offered to or opened in a thread"
        )
        self.settled = meter.create_counter(
            "agui_interrupts_settled", "interrupts resolved, cancelled, expired or withdrawn"
        )

    def observe(self, records: Iterable[InterruptRecord]) -> None:
        """Count what changed since the last look (call after anything touches interrupts)."""
        now = {r.id: r for r in records}
        for record in now.values():
            if record.status in PENDING_STATUSES and record.id not in self.pending:
                self.opened.add(1, {"reason": str(record.interrupt.get("reason", ""))})
        for interrupt_id in self.pending:
            seen = now.get(interrupt_id)
            if seen is None or seen.status not in PENDING_STATUSES:
                status = seen.status.value if seen is not None else "dropped"
                self.settled.add(1, {"status": status})
        self.pending = {i for i, r in now.items() if r.status in PENDING_STATUSES}
