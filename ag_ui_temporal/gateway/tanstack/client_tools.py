"""Whether a TanStack client's own definition of an approval tool can match the server's.

The client decides by hashes the server never sees, but it sends its tools with every run
(`RunAgentInput.tools[].parameters`: its `inputSchema` as JSON Schema, `$schema` dropped). A
sent schema other than what a matching definition sends means its approvals fall back to
`generic` items; `schema_difference` says where the two first differ, and
`note_client_tools` puts that on the tool's interrupts (`CLIENT_TOOL_MISMATCH_KEY`). Equal
schemas do not prove a match: `needsApproval` and `$schema` are not sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from ag_ui_temporal.gateway.tanstack.approval_schema import ApprovalEnvelope
from ag_ui_temporal.gateway.tanstack.bindings import BINDING_METADATA_KEY
from ag_ui_temporal.gateway.tanstack.canonical import JsonObject, canonical_interrupt_json
from ag_ui_temporal.workflows.contract import WireDict

__all__ = ["CLIENT_TOOL_MISMATCH_KEY", "note_client_tools", "schema_difference"]

CLIENT_TOOL_MISMATCH_KEY: Final = "ag-ui-temporal:clientToolMismatch"
"""`Interrupt.metadata` key of a `tool_call` interrupt whose tool the client sent with another
schema: `{"toolName", "difference"}`."""
MAX_DEPTH: Final = 32
"""How deep the comparison walks a schema before it calls the rest different."""
_SHOWN: Final = 60


def schema_difference(envelope: ApprovalEnvelope, sent: Any) -> str | None:
    """Where the `parameters` a client sent for a tool first differ from what a definition
    that hashes like the approval `envelope` (`read_approval_response_schema`) sends; None
    when they do not."""
    expected, got = _as_sent(envelope.input_schema or {"type": "object"}), _as_sent(sent)
    if _text(expected) == _text(got):  # the usual case, at C speed: the same JSON
        return None
    if envelope.input_schema is None:
        return "the agent takes no edits: define the tool without an inputSchema"
    return _difference(expected, got, "", 0)


def note_client_tools(event: WireDict, differences: Mapping[str, str]) -> WireDict:
    """`event` with each `tool-approval` interrupt of its outcome whose tool is in
    `differences` (tool name -> difference) marked so; other events as they are."""
    outcome = event.get("outcome")
    if event.get("type") != "RUN_FINISHED" or not outcome or outcome.get("type") != "interrupt":
        return event
    interrupts = [_noted(interrupt, differences) for interrupt in outcome["interrupts"]]
    return {**event, "outcome": {**outcome, "interrupts": interrupts}}


def _noted(interrupt: WireDict, differences: Mapping[str, str]) -> WireDict:
    metadata = interrupt.get("metadata") or {}
    binding = metadata.get(BINDING_METADATA_KEY) or {}
    name = binding.get("toolName")
    if binding.get("kind") != "tool-approval" or not isinstance(name, str):
        return interrupt
    if name not in differences:
        return interrupt
    note = {"toolName": name, "difference": differences[name]}
    return {**interrupt, "metadata": {**metadata, CLIENT_TOOL_MISMATCH_KEY: note}}


def _as_sent(schema: Any) -> Any:
    """A JSON Schema as TanStack's client sends a tool's (`convertSchemaToJsonSchema`): no
    `$schema`, and an object's `type`, `properties` and `required` filled in."""
    if not isinstance(schema, dict):
        return schema
    sent = {key: value for key, value in schema.items() if key != "$schema"}
    if "properties" in sent and "type" not in sent:
        sent["type"] = "object"
    if sent.get("type") == "object":
        sent.setdefault("properties", {})
        sent.setdefault("required", [])
    return sent


def _difference(server: Any, client: Any, path: str, depth: int) -> str | None:
    if depth <= MAX_DEPTH and isinstance(server, dict) and isinstance(client, dict):
        return _object_difference(server, client, path, depth)
    if depth <= MAX_DEPTH and isinstance(server, list) and isinstance(client, list):
        if len(server) == len(client):
            pairs = enumerate(zip(server, client, strict=True))
            found = (_difference(a, b, f"{path}/{i}", depth + 1) for i, (a, b) in pairs)
            return next((text for text in found if text is not None), None)
    if _same(server, client):
        return None
    return f"{path or '/'}: the server's is {_shown(server)}, the client's {_shown(client)}"


def _object_difference(server: JsonObject, client: JsonObject, path: str, depth: int) -> str | None:
    for key in sorted(server.keys() | client.keys()):
        at = f"{path}/{_pointer(str(key))}"
        if key not in client:
            return f"{at}: the client's schema has none (the server's: {_shown(server[key])})"
        if key not in server:
            return f"{at}: only the client's schema has it ({_shown(client[key])})"
        if (found := _difference(server[key], client[key], at, depth + 1)) is not None:
            return found
    return None


def _text(value: Any) -> str | None:
    """JSON text equal for equal JSON (keys sorted; `1` and `1.0`, `1` and `true` told apart,
    so equal texts are equal canonical JSON); None for what is no JSON."""
    try:
        return json.dumps(value, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return None


def _same(server: Any, client: Any) -> bool:
    try:
        return canonical_interrupt_json(server) == canonical_interrupt_json(client)
    except TypeError:
        return False


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    except (TypeError, ValueError):
        text = "?"
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _pointer(key: str) -> str:
    """A JSON Pointer's reference token (RFC 6901)."""
    return key.replace("~", "~0").replace("/", "~1")
