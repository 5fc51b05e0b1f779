"""TanStack AI interrupt bindings, ported from ``@tanstack/ai`` 0.58.0.

A TanStack client only lets the user resolve an AG-UI interrupt when
``interrupt.metadata["tanstack:interruptBinding"]`` carries a binding it can
check (its schema hashes come from ``gateway.tanstack.canonical``):

* ``generic_binding`` / ``with_interrupt_binding`` build an opened
  ``kind: "generic"`` binding (``src/interrupts.ts``) and attach it the way
  ``withInterruptBinding`` (``src/interrupt-resume.ts``) does.
* ``tool_approval_binding`` builds an opened ``kind: "tool-approval"`` binding
  as ``buildActionableInterrupts`` (``src/activities/chat/index.ts``) does,
  from the approval envelope (``gateway.tanstack.approval_schema``).
* ``bind_interrupt`` picks the kind: a ``tool_call`` interrupt whose
  ``responseSchema`` is TanStack's approval envelope and whose metadata names
  the call (``workflows.contract.TOOL_CALL_METADATA_KEY``) gets ``tool-approval``;
  every other interrupt gets ``generic``.
* ``bind_run_finished`` binds every interrupt of a ``RUN_FINISHED`` event's
  interrupt outcome: what the gateway sends, live or hydrated.

A client that registered the same tool with ``needsApproval: true`` (same
schema hashes) shows a ``tool-approval`` item; any other client falls back, by
itself, to a resolvable ``generic`` item for the same interrupt.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from ag_ui_temporal.gateway.tanstack.approval_schema import (
    approval_schema_hash,
    hash_schema_input,
    read_approval_response_schema,
)
from ag_ui_temporal.gateway.tanstack.canonical import (
    JsonObject,
    canonical_interrupt_json,
    interrupt_json_hash,
)
from ag_ui_temporal.workflows.contract import TOOL_CALL_METADATA_KEY, WireDict

__all__ = [
    "BINDING_METADATA_KEY",
    "BINDING_VERSION",
    "bind_interrupt",
    "bind_run_finished",
    "generic_binding",
    "tool_approval_binding",
    "with_interrupt_binding",
]

BINDING_METADATA_KEY: Final = "tanstack:interruptBinding"
"""``INTERRUPT_BINDING_METADATA_KEY``: where the binding sits in ``metadata``."""

BINDING_VERSION: Final = 1
"""``INTERRUPT_BINDING_VERSION``: the only ``v`` the client accepts."""

# ---------------------------------------------------------------------------
# Bindings.
# ---------------------------------------------------------------------------


def _require_id(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} must be a non-empty string.")
    return value


def _opened_binding(kind: str, interrupt_id: str, interrupted_run_id: str) -> JsonObject:
    """Fields every opened binding starts with, in the library's order."""
    return {
        "v": BINDING_VERSION,
        "kind": kind,
        "interruptId": _require_id(interrupt_id, "interrupt_id"),
        "interruptedRunId": _require_id(interrupted_run_id, "interrupted_run_id"),
        "generation": 0,
    }


def generic_binding(
    interrupt_id: str,
    interrupted_run_id: str,
    response_schema: JsonObject | None,
    expires_at: str | None,
) -> JsonObject:
    """An opened ``kind: "generic"`` binding; absent fields are omitted, never null.

    ``interrupted_run_id`` must be the ``runId`` the client sent for the run that
    produced the interrupt, or the client will not let the user resolve it.
    """
    binding = _opened_binding("generic", interrupt_id, interrupted_run_id)
    if response_schema is not None:
        binding["responseSchemaHash"] = interrupt_json_hash(response_schema)
    if expires_at is not None:
        if not isinstance(expires_at, str):
            raise TypeError("expires_at must be an ISO 8601 string.")
        binding["expiresAt"] = expires_at
    return binding


def with_interrupt_binding(interrupt: JsonObject, binding: JsonObject) -> JsonObject:
    """Port of ``withInterruptBinding``: a copy whose metadata carries ``binding``.

    Other metadata keys are kept; ``v`` and ``interruptId`` are forced to the
    current version and the interrupt's own id. The input is not modified.
    """
    interrupt_id = _require_id(interrupt.get("id"), "interrupt id")
    metadata = interrupt.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise TypeError("Interrupt metadata must be an object.")
    bound = copy.deepcopy(interrupt)
    bound["metadata"] = {
        **(bound.get("metadata") or {}),
        BINDING_METADATA_KEY: {
            **copy.deepcopy(binding),
            "v": BINDING_VERSION,
            "interruptId": interrupt_id,
        },
    }
    return bound


def tool_approval_binding(
    interrupt_id: str,
    interrupted_run_id: str,
    *,
    tool_name: str,
    tool_call_id: str,
    original_args: Any,
    response_schema: JsonObject,
    expires_at: str | None = None,
) -> JsonObject:
    """An opened ``kind: "tool-approval"`` binding for a call of ``tool_name``.

    ``response_schema`` must be TanStack's approval envelope (see
    ``workflows.contract.approval_response_schema``); the input and approval
    schema hashes are derived from its parts. ``original_args`` must be JSON.
    """
    envelope = read_approval_response_schema(response_schema)
    if envelope is None:
        raise ValueError("response_schema is not a TanStack tool-approval envelope.")
    canonical_interrupt_json(original_args)  # JSON only: the client deep-clones it as JSON
    binding = _opened_binding("tool-approval", interrupt_id, interrupted_run_id)
    binding.update(
        {
            "toolName": _require_id(tool_name, "tool_name"),
            "toolCallId": _require_id(tool_call_id, "tool_call_id"),
            "originalArgs": copy.deepcopy(original_args),
            "inputSchemaHash": hash_schema_input(envelope.input_schema),
            "approvalSchemaHash": approval_schema_hash(envelope.approve, envelope.reject),
            "responseSchemaHash": interrupt_json_hash(response_schema),
        }
    )
    if expires_at is not None:
        if not isinstance(expires_at, str):
            raise TypeError("expires_at must be an ISO 8601 string.")
        binding["expiresAt"] = expires_at
    return binding


# ---------------------------------------------------------------------------
# Binding an AG-UI Interrupt.
# ---------------------------------------------------------------------------


def _optional_wire_field(interrupt: JsonObject, key: str) -> Any:
    """An optional Interrupt field; ``null`` is refused since the client would hash it."""
    if key in interrupt and interrupt[key] is None:
        raise ValueError(f"Interrupt {key} must be omitted, not null.")
    return interrupt.get(key)


def _tool_call(interrupt: JsonObject) -> tuple[str, str, Any] | None:
    """``(toolName, toolCallId, arguments)`` of a ``tool_call`` interrupt that names its call."""
    metadata = interrupt.get("metadata")
    call = metadata.get(TOOL_CALL_METADATA_KEY) if isinstance(metadata, dict) else None
    tool_call_id = interrupt.get("toolCallId")
    if (
        interrupt.get("reason") != "tool_call"
        or not isinstance(tool_call_id, str)
        or not tool_call_id
        or not isinstance(call, dict)
        or not isinstance(call.get("name"), str)
        or not call["name"]
        or "arguments" not in call
    ):
        return None
    try:
        canonical_interrupt_json(call["arguments"])
    except TypeError:
        return None
    return call["name"], tool_call_id, call["arguments"]


def bind_interrupt(interrupt: JsonObject, interrupted_run_id: str) -> JsonObject:
    """Attach TanStack's binding to an AG-UI Interrupt given as a camelCase wire dict.

    ``tool-approval`` for a ``tool_call`` interrupt that names its call and
    announces the approval envelope, ``generic`` for everything else.
    """
    interrupt_id = _require_id(interrupt.get("id"), "interrupt id")
    response_schema = _optional_wire_field(interrupt, "responseSchema")
    expires_at = _optional_wire_field(interrupt, "expiresAt")
    call = _tool_call(interrupt)
    if call is not None and read_approval_response_schema(response_schema) is not None:
        tool_name, tool_call_id, arguments = call
        binding = tool_approval_binding(
            interrupt_id,
            interrupted_run_id,
            tool_name=tool_name,
            tool_call_id=tool_call_id,
            original_args=arguments,
            response_schema=response_schema,
            expires_at=expires_at,
        )
    else:
        binding = generic_binding(interrupt_id, interrupted_run_id, response_schema, expires_at)
    return with_interrupt_binding(interrupt, binding)


def bind_run_finished(event: WireDict) -> WireDict:
    """Attach TanStack's binding to every interrupt of an interrupt outcome."""
    outcome = event.get("outcome")
    if event.get("type") != "RUN_FINISHED" or not outcome or outcome.get("type") != "interrupt":
        return event
    interrupts = [bind_interrupt(i, event["runId"]) for i in outcome["interrupts"]]
    return {**event, "outcome": {**outcome, "interrupts": interrupts}}
