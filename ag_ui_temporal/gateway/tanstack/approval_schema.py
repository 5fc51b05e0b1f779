"""TanStack's tool-approval schema, ported from ``@tanstack/ai`` 0.58.0.

``src/activities/chat/tools/approval-schema.ts``: ``inputSchemaHash`` ports
``hashSchemaInput`` and ``approvalSchemaHash`` / ``responseSchemaHash`` port
``normalizeApprovalSchema``, for tools whose schemas are raw JSON Schema (every
Python tool's are). ``read_approval_response_schema`` tells whether an
interrupt's ``responseSchema`` is exactly the approval envelope.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from ag_ui_temporal.gateway.tanstack.canonical import (
    JsonObject,
    canonical_interrupt_json,
    digest_interrupt_json,
    interrupt_json_hash,
)
from ag_ui_temporal.workflows.contract import approval_response_schema

__all__ = [
    "ApprovalEnvelope",
    "approval_schema_hash",
    "hash_schema_input",
    "read_approval_response_schema",
]

# ``jsonSchemaKeywords``: a plain object with one of these keys is a raw JSON Schema.
_JSON_SCHEMA_KEYWORDS: Final = frozenset(
    {
        "$schema",
        "$id",
        "$ref",
        "$defs",
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "oneOf",
        "anyOf",
        "allOf",
        "enum",
        "const",
        "format",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
    }
)


def _is_raw_json_schema(value: Any) -> bool:
    """``isRawJsonSchema``: what the library accepts (and hashes as is) as a raw schema."""
    return isinstance(value, dict) and any(key in _JSON_SCHEMA_KEYWORDS for key in value)


def hash_schema_input(schema: JsonObject | None) -> str:
    """Port of ``hashSchemaInput`` for a raw JSON Schema, or for no schema at all (``None``).

    A zod schema hashes the JSON Schema ``~standard.jsonSchema.input({target:
    "draft-2020-12"})`` gives, ``$schema`` included; a Python tool's schema
    hashes equal only when it is that JSON exactly.
    """
    if schema is None:
        return digest_interrupt_json("undefined")
    if not _is_raw_json_schema(schema):
        raise TypeError("Expected a supported SchemaInput.")
    return interrupt_json_hash(schema)


def approval_schema_hash(approve: JsonObject | None, reject: JsonObject | None) -> str:
    """``normalizeApprovalSchema(...).approvalSchemaHash`` for raw branch schemas."""
    return interrupt_json_hash({"approve": approve, "reject": reject})


@dataclass(frozen=True)
class ApprovalEnvelope:
    """The parts TanStack's approval ``responseSchema`` is built from."""

    input_schema: JsonObject | None
    """The tool's input schema (the approve branch's ``editedArgs``), if it has one."""
    approve: JsonObject | None
    """Payload schema of an approval, if it needs one."""
    reject: JsonObject | None
    """Payload schema of a rejection, if it needs one."""


def _branch_properties(branch: Any) -> dict[str, Any] | None:
    properties = branch.get("properties") if isinstance(branch, dict) else None
    return properties if isinstance(properties, dict) else None


def read_approval_response_schema(schema: Any) -> ApprovalEnvelope | None:
    """The parts of a TanStack approval envelope, or ``None`` when ``schema`` is not one.

    Only a schema equal (canonically) to the envelope ``normalizeApprovalSchema``
    builds from its parts is accepted, so the hashes derived from the parts
    describe exactly the schema the interrupt announces.
    """
    branches = schema.get("oneOf") if isinstance(schema, dict) else None
    if not isinstance(branches, list) or len(branches) != 2:
        return None
    approve_props, reject_props = map(_branch_properties, branches)
    if approve_props is None or reject_props is None:
        return None
    envelope = ApprovalEnvelope(
        input_schema=approve_props.get("editedArgs"),
        approve=approve_props.get("payload"),
        reject=reject_props.get("payload"),
    )
    parts = (envelope.input_schema, envelope.approve, envelope.reject)
    if not all(part is None or _is_raw_json_schema(part) for part in parts):
        return None
    rebuilt = approval_response_schema(*parts)
    try:
        if canonical_interrupt_json(rebuilt) != canonical_interrupt_json(schema):
            return None
    except TypeError:
        return None
    return envelope
