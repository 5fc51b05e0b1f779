"""`agui_audit_append`: a workflow's audit records into the store, each key once."""

from __future__ import annotations

import asyncio

from temporalio import activity

from ag_ui_temporal.store import AuditLog
from ag_ui_temporal.workflows.contract.audit import AUDIT_APPEND_ACTIVITY, AuditBatch


class AuditActivities:
    def __init__(self, log: AuditLog) -> None:
        self.log = log
        self._appending: set[asyncio.Task[int]] = set()  # held: the loop keeps weak ones

    @activity.defn(name=AUDIT_APPEND_ACTIVITY)
    async def append(self, batch: AuditBatch) -> int:
        """Append `batch` to its scope's trail; a key the store holds is skipped (a retried
        attempt, a replayed workflow task). Returns how many records were new.

        A timed-out attempt (a thread's local send gives up after a second) stops waiting,
        not the append: cancelled inside its transaction, a SQLite connection could keep the
        database's write lock until it is collected, and every writer would wait on it. The
        append ends (committed or rolled back) in the background; the next send finds what
        it wrote."""
        appending = asyncio.ensure_future(self.log.append(batch))
        self._appending.add(appending)
        appending.add_done_callback(self._settled)
        return await asyncio.shield(appending)

    def _settled(self, appending: asyncio.Task[int]) -> None:
        self._appending.discard(appending)
        if not appending.cancelled():
            # taken here too: an append whose attempt stopped waiting fails to nobody (the
            # workflow sends the records again), not to asyncio's "never retrieved" log
            appending.exception()
