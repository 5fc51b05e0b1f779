"""The audit trail on the worker's side: the activity that appends the workflows' records to
the store, and the retention that drops old ones (`AUDIT_RETENTION`).

The records and their hash chains are the store's (`ag_ui_temporal.store.audit`); what a
workflow records is the contract's (`workflows.contract.audit`).
"""

from ag_ui_temporal.audit.activities import AuditActivities
from ag_ui_temporal.audit.retention import keep_retention

__all__ = ["AuditActivities", "keep_retention"]
