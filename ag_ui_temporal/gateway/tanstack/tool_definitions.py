"""TypeScript TanStack AI tool definitions of an agent's approval tools, written from the
schemas its approvals announce, so that a client's hashes are the server's by construction.

TanStack's client shows a `tool_call` interrupt as a `tool-approval` item only when the tool
it registered under that name has `needsApproval: true` and hashes like the binding
(`inputSchemaHash`, `approvalSchemaHash`, `responseSchemaHash`: `bindings.py`). It hashes the
JSON Schema a Standard JSON Schema gives (`~standard.jsonSchema.input(...)`) as it is, so each
definition written here carries the server's JSON Schema itself, behind a small Standard
Schema (`serverSchema<T>`) that types `originalArgs` and `editedArgs` as `T` (a TypeScript type
written from the schema). It validates nothing: the server checks every answer, and a refused
one comes back on the item (`interruptErrors`). zod could not do it in general: it writes
its own JSON Schema (always with `$schema`, which a pydantic-ai tool's schema has not; with
its own `pattern`s and integer bounds).

An approval the gateway does not bind as a `tool-approval` (a sub-agent's question about its
own call, `workflows.thread.agents._subagents`) or that TanStack cannot bind (a schema that is
not TanStack's envelope, e.g. arguments with nested models under `$defs`) is listed in a
comment: its items are generic.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Final, Protocol

from ag_ui_temporal.gateway.tanstack.approval_schema import (
    ApprovalEnvelope,
    approval_schema_hash,
    hash_schema_input,
    read_approval_response_schema,
)
from ag_ui_temporal.gateway.tanstack.canonical import JsonObject, interrupt_json_hash

__all__ = ["ApprovalToolSpec", "typescript_definitions"]


class ApprovalToolSpec(Protocol):
    """A tool whose calls a person approves (`agents.approval_tools.ApprovalTool`)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def parameters(self) -> JsonObject: ...
    @property
    def response_schema(self) -> JsonObject: ...
    @property
    def asked_by(self) -> str: ...


LINE_WIDTH: Final = 96
"""Where a JSON literal breaks into lines."""
MAX_TYPE_DEPTH: Final = 12
"""Nesting beyond this is typed `unknown` (the schema itself is written whole)."""
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_RESERVED: Final = frozenset(
    "break case catch class const continue debugger default delete do else enum export extends "
    "false finally for function if import in instanceof new null return super switch this throw "
    "true try typeof var void while with as implements interface let package private protected "
    "public static yield any boolean number string symbol type from of await async unknown never "
    "object undefined".split()
)
_OWN_NAMES: Final = frozenset(
    {"toolDefinition", "serverSchema", "ServerSchema", "approvalTools", "clientToolsToApprove"}
)

PRELUDE: Final = """\
import { toolDefinition } from '@tanstack/ai'

/**
 * A JSON Schema exactly as the server announces it, typed `T` for TanStack AI: it hashes it
 * as it is (so the server's approvals are `tool-approval` items), and `T` types the item's
 * `originalArgs` and `editedArgs`. It checks nothing itself: the server checks every answer,
 * and a refused one comes back as the item's error.
 */
export interface ServerSchema<T> {
  readonly '~standard': {
    readonly version: 1
    readonly vendor: 'ag-ui-temporal'
    readonly types?: { readonly input: T; readonly output: T }
    readonly validate: (value: unknown) => { readonly value: T }
    readonly jsonSchema: {
      readonly input: (options: { readonly target: string }) => Record<string, unknown>
      readonly output: (options: { readonly target: string }) => Record<string, unknown>
    }
  }
  /** Never set: it tells TanStack's types this is no raw JSON Schema (they would type its
   * values `unknown`), as a JSON Schema's `required` is a list. */
  readonly required?: 'not a raw JSON Schema'
}

function serverSchema<T>(schema: Record<string, unknown>): ServerSchema<T> {
  const copy = (): Record<string, unknown> => JSON.parse(JSON.stringify(schema))
  return {
    '~standard': {
      version: 1,
      vendor: 'ag-ui-temporal',
      validate: (value) => ({ value: value as T }),
      jsonSchema: { input: copy, output: copy },
    },
  }
}
"""


def typescript_definitions(
    agent: str, tools: Sequence[ApprovalToolSpec], client_tools: Sequence[str]
) -> str:
    """A TypeScript module of TanStack AI definitions (`toolDefinition`, `needsApproval:
    true`) of `agent`'s approval tools, exported by name and together as `approvalTools`."""
    names = _Names()
    parts = [_header(agent), PRELUDE]
    exported: list[str] = []
    skipped: list[str] = []
    for tool in tools:
        envelope = read_approval_response_schema(tool.response_schema)
        if envelope is None or tool.asked_by != agent:
            skipped.append(f"//   {_code(tool.name)}: {_skip_reason(agent, tool)}")
            continue
        identifier = names.value(tool.name)
        exported.append(identifier)
        parts.append(_definition(tool, envelope, identifier, names))
    parts.append(_together(exported, skipped, client_tools))
    return "\n".join(parts)


def _header(agent: str) -> str:
    url = repr(_doc(f"/agents/{agent}"))
    return f"""\
// TanStack AI tool definitions of the tools the agent {_code(agent)} asks a person to approve,
// written by ag-ui-temporal (`GET /agents/{{agent}}/tools.ts`, `ag-ui-temporal tools`).
// Do not edit: the server recognises a tool by the hashes of these schemas, so write the file
// again when the agent's tools change.
//
//   import {{ approvalTools }} from './<this file>'
//   useChat({{ connection: fetchServerSentEvents({url}), tools: approvalTools }})
//
// Each approval is then a `tool-approval` item: `item.toolName`, `item.originalArgs`,
// `item.resolveInterrupt(true | false, {{ editedArgs?, payload? }})`. Needs @tanstack/ai 0.58.
"""


def _definition(
    tool: ApprovalToolSpec, envelope: ApprovalEnvelope, identifier: str, names: _Names
) -> str:
    pascal = "".join(part[:1].upper() + part[1:] for part in identifier.split("_")) or "Tool"
    args_type = names.type(f"{pascal}Args")
    lines = [
        f"/** The arguments of {_code(tool.name)}. */",
        f"export type {args_type} = {_ts_type(tool.parameters, 0)}",
        "",
    ]
    branches = []
    for branch, label, schema in (
        ("approve", "what an approval of", envelope.approve),
        ("reject", "what a rejection of", envelope.reject),
    ):
        if schema is not None:
            payload_type = names.type(f"{pascal}{branch.title()}Payload")
            lines += [
                f"/** The `payload` of {label} {_code(tool.name)} carries. */",
                f"export type {payload_type} = {_ts_type(schema, 0)}",
                "",
            ]
            branches.append(f"{branch}: {_server_schema(payload_type, schema, 2)}")
    lines += ["/**", f" * {_doc(tool.description) or _code(tool.name)}"]
    if envelope.input_schema is None:
        lines.append(f" * No `inputSchema`: the agent takes no edits ({args_type}: the arguments).")
    lines += [
        f" * inputSchemaHash {hash_schema_input(envelope.input_schema)}",
        f" * approvalSchemaHash {approval_schema_hash(envelope.approve, envelope.reject)}",
        f" * responseSchemaHash {interrupt_json_hash(tool.response_schema)}",
        " */",
        f"export const {identifier} = toolDefinition({{",
        f"  name: {_string(tool.name)},",
        f"  description: {_string(tool.description)},",
    ]
    if envelope.input_schema is not None:
        lines.append(f"  inputSchema: {_server_schema(args_type, envelope.input_schema, 1)},")
    lines.append("  needsApproval: true,")
    if branches:
        lines += ["  approvalSchema: {", *(f"    {branch}," for branch in branches), "  },"]
    lines.append("})")
    return "\n".join(lines) + "\n"


def _together(exported: list[str], skipped: list[str], client_tools: Sequence[str]) -> str:
    lines = [
        "/** Every definition above, as `useChat` / `ChatClient` take them (`tools`). */",
        f"export const approvalTools = [{', '.join(exported)}] as const",
        "",
        "/**",
        " * The client's own tools the agent has a person approve before the client runs them",
        " * (`register(approve_client_tools=...)`). Define each with `needsApproval: true`; its",
        " * `inputSchema` a Standard JSON Schema (zod 4.2+) or a JSON Schema with",
        ' * `$schema: "https://json-schema.org/draft/2020-12/schema"`, as the server stamps it.',
        " */",
        f"export const clientToolsToApprove: readonly string[] = {_json(list(client_tools), 0)}",
    ]
    if skipped:
        lines += ["", "// Not written (their approvals are generic items on TanStack's client):"]
        lines += skipped
    return "\n".join(lines) + "\n"


def _skip_reason(agent: str, tool: ApprovalToolSpec) -> str:
    if tool.asked_by != agent:
        return (
            f"the sub-agent {_code(tool.asked_by)} asks about it, on behalf of a call of "
            f"{_code(agent)}'s (the one the client saw)"
        )
    if "$defs" in tool.response_schema:
        return "its arguments' schema has `$defs` (nested models): TanStack's envelope has none"
    return "its approval schema is not TanStack's approval envelope"


def _server_schema(type_name: str, schema: JsonObject, indent: int) -> str:
    return f"serverSchema<{type_name}>({_json(schema, indent)})"


# ---------------------------------------------------------------------------
# TypeScript types from JSON Schema (what a person reads and the compiler checks).
# ---------------------------------------------------------------------------

_PRIMITIVES: Final = {
    "string": "string",
    "number": "number",
    "integer": "number",
    "boolean": "boolean",
    "null": "null",
}


def _ts_type(schema: Any, indent: int, depth: int = 0) -> str:
    """The TypeScript type of the values `schema` allows, as closely as types say it (what
    they cannot say, such as formats and bounds, is `unknown` or the plain type). `indent`:
    how deep an object's members sit; `depth`: how many schemas this one is inside."""
    if schema is False:
        return "never"
    if not isinstance(schema, dict) or depth > MAX_TYPE_DEPTH:
        return "unknown"
    if "const" in schema:
        return _literal(schema["const"])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return " | ".join(dict.fromkeys(_literal(value) for value in schema["enum"]))
    for combined in ("anyOf", "oneOf"):
        if isinstance(schema.get(combined), list) and schema[combined]:
            members = (_ts_type(s, indent, depth + 1) for s in schema[combined])
            return " | ".join(dict.fromkeys(members))
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        members = (_ts_type(s, indent, depth + 1) for s in schema["allOf"])
        return " & ".join(f"({member})" if "|" in member else member for member in members)
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else []
    if not kinds and isinstance(schema.get("properties"), dict):
        kinds = ["object"]
    if not kinds:
        return "unknown"
    return " | ".join(dict.fromkeys(_typed(schema, k, indent, depth) for k in kinds))


def _typed(schema: JsonObject, kind: Any, indent: int, depth: int) -> str:
    if kind in _PRIMITIVES:
        return _PRIMITIVES[kind]
    if kind == "array":
        items = schema.get("items")
        item = _ts_type(items, indent, depth + 1) if isinstance(items, dict) else "unknown"
        return f"Array<{item}>"
    if kind == "object":
        return _object_type(schema, indent, depth)
    return "unknown"


def _object_type(schema: JsonObject, indent: int, depth: int) -> str:
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    required = set(required) if isinstance(required, list) else set()
    pad = "  " * (indent + 1)
    lines = []
    for key, value in properties.items():
        description = value.get("description") if isinstance(value, dict) else None
        if isinstance(description, str) and description.strip():
            lines.append(f"{pad}/** {_doc(description)} */")
        optional = "" if key in required else "?"
        member = _ts_type(value, indent + 1, depth + 1)
        lines.append(f"{pad}{_property_key(key)}{optional}: {member}")
    if schema.get("additionalProperties", True) is not False:
        lines.append(f"{pad}[key: string]: unknown")
    if not lines:
        return "Record<string, never>"
    return "{\n" + "\n".join(lines) + "\n" + "  " * indent + "}"


def _literal(value: Any) -> str:
    if value is None or isinstance(value, bool | int | float | str):
        return _json(value, 0)
    return "unknown"


def _property_key(key: str) -> str:
    return key if _IDENTIFIER.fullmatch(key) else _string(key)


# ---------------------------------------------------------------------------
# Names and text.
# ---------------------------------------------------------------------------


class _Names:
    """Exported names, each used once, none a reserved word or one of the module's own."""

    def __init__(self) -> None:
        self.used: set[str] = set(_OWN_NAMES)

    def value(self, tool_name: str) -> str:
        identifier = re.sub(r"[^A-Za-z0-9_$]", "_", tool_name) or "tool"
        if not _IDENTIFIER.fullmatch(identifier) or identifier in _RESERVED:
            identifier = f"{identifier}Tool" if identifier[0].isalpha() else f"tool_{identifier}"
        return self._claim(identifier)

    def type(self, name: str) -> str:
        return self._claim(name)

    def _claim(self, name: str) -> str:
        found, n = name, 1
        while found in self.used:
            n += 1
            found = f"{name}{n}"
        self.used.add(found)
        return found


def _json(value: Any, indent: int) -> str:
    """JSON as a TypeScript literal (JSON is one), sitting `indent` levels in: on one line
    where it fits, else a member a line. ASCII only, so that any text reaches the compiler
    as the same string."""
    flat = json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(", ", ": "))
    if len(flat) + 2 * indent <= LINE_WIDTH or not isinstance(value, dict | list) or not value:
        return flat
    pad = "  " * (indent + 1)
    if isinstance(value, list):
        items = [f"{pad}{_json(item, indent + 1)}" for item in value]
        return "[\n" + ",\n".join(items) + "\n" + "  " * indent + "]"
    members = [f"{pad}{_string(key)}: {_json(item, indent + 1)}" for key, item in value.items()]
    return "{\n" + ",\n".join(members) + "\n" + "  " * indent + "}"


def _string(text: str) -> str:
    return json.dumps(text, ensure_ascii=True)


def _code(text: str) -> str:
    """A name for a comment: on one line, in backticks, never closing a `/** */` early."""
    return "`" + _doc(text).replace("`", "'") + "`"


def _doc(text: str) -> str:
    """Text for a comment: on one line (`split` takes JavaScript's line terminators
    U+2028 and U+2029 too), never closing a `/** */` early, and UTF-8 (a lone surrogate
    becomes U+FFFD, a pair its character)."""
    text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return " ".join(text.split()).replace("*/", "*\\/")
