"""TanStack AI interrupt bindings: the public names, kept where they have always been.

The code lives in `gateway.streaming` (`canonical` for canonical JSON and its digest,
`approval_schema` for the tool-approval envelope, `bindings` for building and attaching
bindings); `canonical_interrupt_json` and `digest_interrupt_json` are promised here.
"""

from __future__ import annotations

from ag_ui_temporal.gateway.streaming.approval_schema import (
    ApprovalEnvelope,
    approval_schema_hash,
    hash_schema_input,
    read_approval_response_schema,
)
from ag_ui_temporal.gateway.streaming.bindings import (
    BINDING_METADATA_KEY,
    BINDING_VERSION,
    bind_interrupt,
    generic_binding,
    tool_approval_binding,
    with_interrupt_binding,
)
from ag_ui_temporal.gateway.streaming.canonical import (
    canonical_interrupt_json,
    digest_interrupt_json,
    interrupt_json_hash,
)

__all__ = [
    "BINDING_METADATA_KEY",
    "BINDING_VERSION",
    "ApprovalEnvelope",
    "approval_schema_hash",
    "bind_interrupt",
    "canonical_interrupt_json",
    "digest_interrupt_json",
    "generic_binding",
    "hash_schema_input",
    "interrupt_json_hash",
    "read_approval_response_schema",
    "tool_approval_binding",
    "with_interrupt_binding",
]
