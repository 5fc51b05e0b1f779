"""TanStack AI interrupt bindings, ported from ``@tanstack/ai`` 0.58.0.

A TanStack client only lets the user resolve an AG-UI interrupt when
``interrupt.metadata["tanstack:interruptBinding"]`` carries a binding it can
check. Schema hashes in a binding are ``digest(canonical(schema))``, so the
canonical JSON below must reproduce the library's output byte for byte:

* ``canonical_interrupt_json`` ports ``canonicalInterruptJson``
  (``src/interrupt-serialization.ts``): JavaScript ``JSON.stringify`` for
  scalars, object keys sorted by UTF-16 code units, no whitespace.
* ``digest_interrupt_json`` ports ``digestInterruptJson`` with the default
  hash: ``"sha256:"`` + lower-case hex SHA-256 of the text's UTF-8.
* ``generic_binding`` / ``with_interrupt_binding`` build an opened
  ``kind: "generic"`` binding (``src/interrupts.ts``) and attach it the way
  ``withInterruptBinding`` (``src/interrupt-resume.ts``) does.
* ``tool_approval_binding`` builds an opened ``kind: "tool-approval"`` binding
  as ``buildActionableInterrupts`` (``src/activities/chat/index.ts``) does:
  ``inputSchemaHash`` ports ``hashSchemaInput`` and ``approvalSchemaHash`` /
  ``responseSchemaHash`` port ``normalizeApprovalSchema``
  (``src/activities/chat/tools/approval-schema.ts``), for tools whose schemas
  are raw JSON Schema (every Python tool's are).
* ``bind_interrupt`` picks the kind: a ``tool_call`` interrupt whose
  ``responseSchema`` is TanStack's approval envelope and whose metadata names
  the call (``workflows.tools.TOOL_CALL_METADATA_KEY``) gets ``tool-approval``;
  every other interrupt gets ``generic``.

A client that registered the same tool with ``needsApproval: true`` (same
schema hashes) shows a ``tool-approval`` item; any other client falls back, by
itself, to a resolvable ``generic`` item for the same interrupt.
"""

from __future__ import annotations

import copy
import hashlib
import math
import numbers
import re
from dataclasses import dataclass
from typing import Any, Final

from workflows.tools import TOOL_CALL_METADATA_KEY, approval_response_schema

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

BINDING_METADATA_KEY: Final = "tanstack:interruptBinding"
"""``INTERRUPT_BINDING_METADATA_KEY``: where the binding sits in ``metadata``."""

BINDING_VERSION: Final = 1
"""``INTERRUPT_BINDING_VERSION``: the only ``v`` the client accepts."""

# The library's TypeError messages (interrupt-serialization.ts).
_NOT_JSON: Final = "Interrupt values must be JSON-compatible."
_NOT_PLAIN: Final = "Interrupt values must use plain JSON objects."
_CYCLE: Final = "Interrupt values must not cycle."
_NOT_TEXT: Final = "Interrupt digests require canonical JSON text."

JsonObject = dict[str, Any]

# ---------------------------------------------------------------------------
# Strings: JavaScript JSON.stringify (well-formed, ES2019) on UTF-16 text.
# ---------------------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")
_NEEDS_ESCAPE = re.compile('[\x00-\x1f"\\\\\ud800-\udfff]')
_SHORT_ESCAPES: Final = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


def _join_surrogate_pairs(text: str) -> str:
    """Read ``text`` as JS does: adjacent high+low surrogates form one character."""
    if not _SURROGATE.search(text):
        return text
    utf16 = text.encode("utf-16-be", "surrogatepass")
    return utf16.decode("utf-16-be", "surrogatepass")


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    return _SHORT_ESCAPES.get(char) or f"\\u{ord(char):04x}"


def _js_string(text: str) -> str:
    """``JSON.stringify(text)``: escape quote, backslash, controls, lone surrogates."""
    return '"' + _NEEDS_ESCAPE.sub(_escape_char, _join_surrogate_pairs(text)) + '"'


def _utf16_sort_key(text: str) -> bytes:
    """Big-endian UTF-16 bytes compare like JS ``Array.prototype.sort`` on strings."""
    return text.encode("utf-16-be", "surrogatepass")


# ---------------------------------------------------------------------------
# Numbers: ECMAScript Number::toString (what JSON.stringify writes).
# ---------------------------------------------------------------------------


def _shortest_digits(value: float) -> tuple[str, int]:
    """Shortest round-trip digits ``s`` and exponent ``n`` with value = 0.s * 10**n."""
    mantissa, _, exponent = repr(value).partition("e")  # repr is shortest round-trip
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    significant = digits.lstrip("0")
    n = len(whole) + int(exponent or 0) - (len(digits) - len(significant))
    return significant.rstrip("0"), n


def _js_number(value: float) -> str:
    """Format a finite double exactly as JavaScript ``String(value)`` does."""
    if value == 0:
        return "0"  # also -0
    sign = "-" if value < 0 else ""
    digits, n = _shortest_digits(abs(value))
    k = len(digits)
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        body = "0." + "0" * -n + digits
    else:
        mantissa = digits if k == 1 else f"{digits[0]}.{digits[1:]}"
        body = f"{mantissa}e{'+' if n >= 1 else '-'}{abs(n - 1)}"
    return sign + body


def _number_json(value: int | float) -> str:
    """A Python number as the JS double ``JSON.parse`` would have produced."""
    try:
        as_double = float(value)
    except OverflowError:
        raise TypeError(_NOT_JSON) from None  # JSON.parse gives Infinity
    if not math.isfinite(as_double):
        raise TypeError(_NOT_JSON)
    return _js_number(as_double)


# ---------------------------------------------------------------------------
# Canonical JSON and digest.
# ---------------------------------------------------------------------------


def _rejection(value: Any) -> TypeError:
    """Map a non-JSON Python value onto the library's two rejection messages.

    JS primitives that are not JSON (undefined, function, bigint, NaN) get the
    "JSON-compatible" message; objects with a non-plain prototype (Date, Map,
    class instances) get the "plain JSON objects" one. Python's analogues:
    other numbers and callables are primitives; everything else is an object.
    """
    if isinstance(value, numbers.Number) or callable(value):
        return TypeError(_NOT_JSON)
    return TypeError(_NOT_PLAIN)


def _canonical_object(record: dict[Any, Any], active: set[int]) -> str:
    if not all(isinstance(key, str) for key in record):
        raise TypeError(_NOT_PLAIN)  # JS object keys are always strings
    members = (
        f"{_js_string(key)}:{_canonical(record[key], active)}"
        for key in sorted(record, key=_utf16_sort_key)
    )
    return "{" + ",".join(members) + "}"


def _canonical_array(items: list[Any], active: set[int]) -> str:
    return "[" + ",".join(_canonical(item, active) for item in items) + "]"


def _canonical(value: Any, active: set[int]) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: bool is an int subclass
        return "true" if value else "false"
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, int | float):
        return _number_json(value)
    if not isinstance(value, list | dict):
        raise _rejection(value)
    if id(value) in active:
        raise TypeError(_CYCLE)
    active.add(id(value))
    if isinstance(value, list):
        encoded = _canonical_array(value, active)
    else:
        encoded = _canonical_object(value, active)
    active.discard(id(value))
    return encoded


def canonical_interrupt_json(value: Any) -> str:
    """Port of ``canonicalInterruptJson``: deterministic JSON text for hashing.

    Raises ``TypeError`` with the library's messages for NaN, infinities,
    cycles and values that are not JSON.
    """
    return _canonical(value, set())


def _utf8_like_text_encoder(text: str) -> bytes:
    """``new TextEncoder().encode(text)``: lone surrogates become U+FFFD."""
    return _SURROGATE.sub("\ufffd", _join_surrogate_pairs(text)).encode("utf-8")


def digest_interrupt_json(canonical: str) -> str:
    """Port of ``digestInterruptJson`` with the default hash (``sha256:<hex>``)."""
    if not isinstance(canonical, str):
        raise TypeError(_NOT_TEXT)
    return "sha256:" + hashlib.sha256(_utf8_like_text_encoder(canonical)).hexdigest()


def interrupt_json_hash(value: Any) -> str:
    """``digestInterruptJson(canonicalInterruptJson(value))``, as schema hashes are made."""
    return digest_interrupt_json(canonical_interrupt_json(value))


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


# ---------------------------------------------------------------------------
# Tool approvals (src/activities/chat/tools/approval-schema.ts).
# ---------------------------------------------------------------------------

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
    ``workflows.tools.approval_response_schema``); the input and approval
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
