"""`agui_audit_append`: a workflow's audit records into the store, each key once."""

from __future__ import annotations

from temporalio import activity

from ag_ui_temporal.store import AuditLog
from ag_ui_temporal.workflows.contract.audit import AUDIT_APPEND_ACTIVITY, AuditBatch


class AuditActivities:
    def __init__(self, log: AuditLog) -> None:
        self.log = log

    @activity.defn(name=AUDIT_APPEND_ACTIVITY)
    async def append(self, batch: AuditBatch) -> int:
        """Append `batch` to its scope's trail; a key the store holds is skipped (a retried
        attempt, a replayed workflow task). Returns how many records were new."""
        return await self.log.append(batch)
