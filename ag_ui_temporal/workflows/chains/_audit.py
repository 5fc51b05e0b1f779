"""The chain's part of the audit trail: its lines, as records for the store.

The chain appends to `ChainState.audit` as things happen; a background task of the workflow
sends each line the store does not have yet (`audit_written` counts those it has), in order,
so `GET /approvals/{chain}` and `GET /audit` read the trail from the store, also after
Temporal deleted the workflow.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.workflows.contract.audit import (
        AuditRecord,
        audit_key,
        bounded,
        chain_scope,
    )
    from ag_ui_temporal.workflows.contract.chains import chain_participants

from ag_ui_temporal.workflows import _trail
from ag_ui_temporal.workflows.chains._state import AuditEntry, ChainState

ON_THE_RECORD = {"at", "kind", "principal", "interrupt_id", "run_id"}
"""An entry's fields a record carries as its own; the rest go in its `data`."""


def record(chain_id: str, index: int, entry: AuditEntry) -> AuditRecord:
    """The `index`th line of the chain's trail as the store keeps it."""
    rest = entry.model_dump(mode="json", exclude=ON_THE_RECORD, exclude_none=True)
    return AuditRecord(
        key=audit_key(chain_id, str(index)),
        kind=entry.kind,
        at=entry.at,
        chain_id=chain_id,
        interrupt_id=entry.interrupt_id,
        run_id=entry.run_id,
        principal=entry.principal,
        data={name: bounded(value) for name, value in rest.items()},
    )


def unwritten(state: ChainState) -> bool:
    return state.audit_written < len(state.audit)


async def flush(state: ChainState, task_queue: str) -> None:
    """Send the lines the store does not have; count those it took."""
    first = state.audit_written
    records = [record(state.chain_id, i, e) for i, e in enumerate(state.audit[first:], first)]
    readers = chain_participants(state)  # the state is a `ChainView`: no copy of it
    stored = await _trail.append(chain_scope(state.chain_id), readers, records, task_queue)
    state.audit_written = first + stored
