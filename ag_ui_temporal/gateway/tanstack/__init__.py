"""TanStack AI's bindings over AG-UI: what only a TanStack client needs.

The rest of the gateway speaks plain AG-UI, which any client reads; TanStack AI
(`@tanstack/ai`, `@tanstack/ai-client`) adds its own layer on the same events, and
that layer lives here, ported from the library and checked against it (tests/node),
so it can follow TanStack's releases without touching the AG-UI core. It needs only
the protocol (`workflows.contract`); the gateway calls it, never the other way.

- `canonical`: TanStack's canonical JSON and its digest (the schema hashes)
- `approval_schema`: the tool-approval envelope and its hashes
- `bindings`: the interrupt bindings (`metadata["tanstack:interruptBinding"]`)
  every `RUN_FINISHED` and every hydrated interrupt carries
- `hydration`: a thread's hydration (`GET ?threadId=`) as TanStack reads it
- `interrupt_errors`: a refused resume's errors as `metadata.tanstack.interruptErrors`
"""

from __future__ import annotations

from ag_ui_temporal.gateway.tanstack.approval_schema import (
    ApprovalEnvelope,
    approval_schema_hash,
    hash_schema_input,
    read_approval_response_schema,
)
from ag_ui_temporal.gateway.tanstack.bindings import (
    BINDING_METADATA_KEY,
    BINDING_VERSION,
    bind_interrupt,
    bind_run_finished,
    generic_binding,
    tool_approval_binding,
    with_interrupt_binding,
)
from ag_ui_temporal.gateway.tanstack.canonical import (
    canonical_interrupt_json,
    digest_interrupt_json,
    interrupt_json_hash,
)
from ag_ui_temporal.gateway.tanstack.hydration import ThreadHydration, thread_hydration
from ag_ui_temporal.gateway.tanstack.interrupt_errors import (
    TANSTACK_CODES,
    interrupt_errors_metadata,
)

__all__ = [
    "BINDING_METADATA_KEY",
    "BINDING_VERSION",
    "TANSTACK_CODES",
    "ApprovalEnvelope",
    "ThreadHydration",
    "approval_schema_hash",
    "bind_interrupt",
    "bind_run_finished",
    "canonical_interrupt_json",
    "digest_interrupt_json",
    "generic_binding",
    "hash_schema_input",
    "interrupt_errors_metadata",
    "interrupt_json_hash",
    "read_approval_response_schema",
    "thread_hydration",
    "tool_approval_binding",
    "with_interrupt_binding",
]
