"""The audit trail's wire: what a workflow records about an interrupt's life, once per key.

Every interrupt's life (asked or offered, delivered, answered, expired, withdrawn, and an
approved tool's result) and every line of a chain's trail becomes an `AuditRecord`. The
thread and the chain send theirs in `AuditBatch`es to the activity `agui_audit_append`,
which appends them to the store's hash chain of the batch's `scope` (one per thread, one
per chain); a key already stored is skipped, so a retried activity, a replayed workflow
task or a second worker changes nothing. The store keeps them after Temporal deletes the
workflows (`ag_ui_temporal.store.audit`).

Everything a record carries is bounded here (`bounded`): a value past `MAX_VALUE_BYTES` is
kept as its SHA-256 and size, so a batch stays well under Temporal's payload limits
whatever the agent proposed or the person answered.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Final, Literal

from pydantic import BaseModel, Field

from ag_ui_temporal.workflows.contract.names import fitted_key

AUDIT_APPEND_ACTIVITY: Final = "agui_audit_append"
"""Activity (thread task queue): append an `AuditBatch` to the store's audit trail."""

ThreadRecordKind = Literal["asked", "offered", "delivered", "answered", "expired", "withdrawn",
                           "result", "revoked"]  # fmt: skip
"""An interrupt's life in a thread: `asked` by the thread's agent, or `offered` by an external
owner (a chain, a producer); `delivered` by a run; `answered` (resolved or cancelled by a
person, or `via` `"standing"` by a standing decision); `expired`; `withdrawn` by its owner;
`result`: what the approved tool returned; `revoked`: the standing decision its answer made
was revoked (`contract.standing`)."""

MAX_VALUE_BYTES: Final = 8 * 1024
"""The largest value (a proposal's arguments, an answer's payload, a tool's result) kept as
is; a larger one is kept as `{"sha256", "bytes"}`."""
MAX_BATCH_RECORDS: Final = 50
"""Most records one activity appends (a batch stays under ~500 KiB)."""
THREAD_SCOPE: Final = "thread:"
CHAIN_SCOPE: Final = "chain:"


def thread_scope(thread_id: str) -> str:
    return f"{THREAD_SCOPE}{thread_id}"


def chain_scope(chain_id: str) -> str:
    return f"{CHAIN_SCOPE}{chain_id}"


def canonical(value: Any) -> bytes:
    """`value` as the trail hashes it: compact JSON, keys sorted, UTF-8."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode()


def digest(value: Any) -> str:
    return hashlib.sha256(canonical(value)).hexdigest()


def bounded(value: Any, limit: int = MAX_VALUE_BYTES) -> Any:
    """`value` if its JSON fits `limit` bytes, else its digest and size (`omitted`)."""
    size = len(canonical(value))
    if size <= limit:
        return value
    return {"omitted": True, "sha256": digest(value), "bytes": size}


def audit_key(*parts: str) -> str:
    """A record's key: its parts, or their SHA-256 when the ids that make it are long."""
    return fitted_key(*parts, sep="#")


class AuditRecord(BaseModel):
    """One thing that happened to an interrupt or a chain (the workflow's account of it)."""

    key: str
    """Once per key: the store skips a key it holds (`audit_key`)."""
    kind: str
    """A `ThreadRecordKind` in a thread's scope; a chain's `AuditKind` in a chain's."""
    at: str
    """When (ISO 8601, workflow time)."""
    thread_id: str | None = None
    chain_id: str | None = None
    """The chain the interrupt is a seat of (a thread's record), or the chain (its own)."""
    interrupt_id: str | None = None
    run_id: str | None = None
    """The run it happened in (asked, delivered, answered)."""
    principal: str | None = None
    """Who acted: answered, was offered to, asked (a chain's requester)."""
    data: dict[str, Any] = Field(default_factory=dict)
    """What the kind records (the proposal, the answer, the result), bounded."""


class AuditBatch(BaseModel):
    """Input of `agui_audit_append`: records of one scope, in the order they happened."""

    scope: str
    """`thread:<id>` or `chain:<id>`: the hash chain the records extend."""
    readers: list[str] = Field(default_factory=list)
    """Who may read the scope besides auditors: the thread's owner, the chain's participants
    (principals or `group:G`). Added to what the store knows; never removed."""
    records: list[AuditRecord] = Field(max_length=MAX_BATCH_RECORDS)
