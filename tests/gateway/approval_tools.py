"""The tools and interrupts the tool approval tests share: test-only tools with approval
payloads (tests/node/tool_approval_lib.mjs defines the same ones in zod) and a `tool_call`
interrupt as the assistant opens it."""

from __future__ import annotations

from typing import Any

from ag_ui_temporal.demo.tools import (
    JSON_SCHEMA_DIALECT,
    SEND_EMAIL,
    TOOL_CALL_METADATA_KEY,
    ApprovalPayloads,
    ToolSpec,
    approval_schema,
)
from ag_ui_temporal.gateway.tanstack import BINDING_METADATA_KEY

EMAIL = "Send an email to ada@example.com saying hi"
EMAILS = "Send emails to ada@example.com, bob@example.com and cy@example.com"
ADA = {"to": "ada@example.com", "subject": "Message from your assistant", "body": "hi"}
EDITED = {"to": "grace@example.com", "subject": "Hello", "body": "hi from Grace's assistant"}

# Test-only tools with approval payloads; tests/node/tool_approval_lib.mjs
# defines the same tools in zod (fixtures archiveThread and tagThread).
ARCHIVE_THREAD = ToolSpec(
    name="archiveThread",
    description="Archive a thread.",
    parameters={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "properties": {"threadId": {"type": "string"}},
        "required": ["threadId"],
        "additionalProperties": False,
    },
    human="approval",
    approval_payloads=ApprovalPayloads(
        reject={
            "$schema": JSON_SCHEMA_DIALECT,
            "type": "object",
            "properties": {"reason": {"type": "string"}},
            "required": ["reason"],
            "additionalProperties": False,
        }
    ),
)
NOTE = {
    "$schema": JSON_SCHEMA_DIALECT,
    "type": "object",
    "properties": {"note": {"type": "string"}},
    "required": ["note"],
    "additionalProperties": False,
}
TAG_THREAD = ToolSpec(
    name="tagThread",
    description="Tag a thread.",
    parameters={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "properties": {"tag": {"type": "string"}},
        "required": ["tag"],
        "additionalProperties": False,
    },
    human="approval",
    approval_payloads=ApprovalPayloads(approve=NOTE, reject=NOTE),
)
FIXTURES = {"archiveThread": ARCHIVE_THREAD, "tagThread": TAG_THREAD}


def tool_call_interrupt(
    tool: ToolSpec = SEND_EMAIL, args: Any = None, **fields: Any
) -> dict[str, Any]:
    """A `tool_call` interrupt as the assistant opens it (before the gateway binds it)."""
    interrupt: dict[str, Any] = {
        "id": f"int-{tool.name}",
        "reason": "tool_call",
        "message": f"Approve {tool.name}?",
        "toolCallId": f"call-{tool.name}",
        "responseSchema": approval_schema(tool),
        "metadata": {
            TOOL_CALL_METADATA_KEY: {"name": tool.name, "arguments": args or ADA},
        },
    }
    interrupt.update(fields)
    return {key: value for key, value in interrupt.items() if value is not None}


def binding_of(interrupt: dict[str, Any]) -> dict[str, Any]:
    return interrupt["metadata"][BINDING_METADATA_KEY]
