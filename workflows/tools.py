"""The demo agent's tools: names, argument schemas and how a person takes part.

Pure data, shared by the agent (which offers the interrupts), the activities
(which do the work), the gateway (which binds tool approvals for TanStack AI)
and the published TypeScript definitions in `examples/tools/`.

Each tool's `parameters` is the single source of truth for its arguments. The
TypeScript definition of the tool must make zod produce exactly this JSON
Schema (`~standard.jsonSchema.input({target: "draft-2020-12"})`, `$schema`
included), because TanStack AI hashes that JSON to decide whether a client's
registered tool is the one the server asked about;
`tests/gateway/test_tool_approvals.py` fails on any drift.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Final, Literal

JsonSchema = dict[str, Any]

JSON_SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
"""The `$schema` zod writes for target draft-2020-12 (and so part of the hashed schema)."""

MAX_SAFE_INTEGER: Final = 2**53 - 1
"""zod's bound for `z.int()`: larger integers are not exact in a JavaScript client."""

TOOL_CALL_METADATA_KEY: Final = "ag-ui-temporal:toolCall"
"""`Interrupt.metadata` key of a `tool_call` interrupt: `{"name", "arguments"}` of the call.

The gateway reads it to build TanStack's `tool-approval` binding (`toolName`,
`originalArgs`); other AG-UI clients can show it as is.
"""


@dataclass(frozen=True)
class ApprovalPayloads:
    """Extra data a person sends along with a decision (TanStack's `approvalSchema`).

    A branch with a schema makes `payload` required for that decision; a branch
    without one forbids it. The same schema for both branches is TanStack's
    single-schema form.
    """

    approve: JsonSchema | None = None
    reject: JsonSchema | None = None


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: JsonSchema
    human: Literal["approval", "input"]
    """`approval`: a person approves (or edits) the call; `input`: a person supplies the args."""
    approval_payloads: ApprovalPayloads | None = None
    """Only for `approval` tools: what a decision must carry besides `approved`/`editedArgs`."""


SEND_EMAIL = ToolSpec(
    name="sendEmail",
    description="Send an email on the user's behalf.",
    parameters={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "properties": {
            "to": {"type": "string", "format": "email"},
            "subject": {"type": "string"},
            "body": {"type": "string"},
        },
        "required": ["to", "subject", "body"],
        "additionalProperties": False,
    },
    human="approval",
)

QUARTERLY_REPORT_FORM: JsonSchema = {
    "$schema": JSON_SCHEMA_DIALECT,
    "type": "object",
    "properties": {
        "quarter": {"type": "string", "enum": ["Q1", "Q2", "Q3", "Q4"]},
        "year": {"type": "integer", "minimum": 2000, "maximum": MAX_SAFE_INTEGER},
        "revenue": {"type": "number"},
    },
    "required": ["quarter", "year", "revenue"],
    "additionalProperties": False,
}

FILE_QUARTERLY_REPORT = ToolSpec(
    name="fileQuarterlyReport",
    description="File the quarterly report; a person fills in the figures.",
    parameters=QUARTERLY_REPORT_FORM,
    human="input",
)

SUBMIT_EXPENSE = ToolSpec(
    name="submitExpense",
    description="Submit an expense for reimbursement; it then goes through the approval chain.",
    parameters={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "properties": {
            "amount": {"type": "number"},
            "currency": {"type": "string"},
            "description": {"type": "string"},
        },
        "required": ["amount", "currency", "description"],
        "additionalProperties": False,
    },
    human="approval",
)

TOOLS: dict[str, ToolSpec] = {
    tool.name: tool for tool in (SEND_EMAIL, FILE_QUARTERLY_REPORT, SUBMIT_EXPENSE)
}


def approval_response_schema(
    input_schema: JsonSchema | None,
    approve: JsonSchema | None = None,
    reject: JsonSchema | None = None,
) -> JsonSchema:
    """TanStack AI's approval response envelope (`normalizeApprovalSchema(...).responseSchema`).

    `oneOf` an approve envelope `{approved: true, editedArgs?, payload?}` and a
    reject envelope `{approved: false, payload?}`, each closed. `editedArgs`
    replaces the arguments whole, so AG-UI approve-with-edits
    (`{"approved": true, "editedArgs": {...}}`) is the approve envelope.
    """
    return {
        "oneOf": [
            _decision_envelope(approved=True, payload=approve, input_schema=input_schema),
            _decision_envelope(approved=False, payload=reject, input_schema=None),
        ]
    }


def _decision_envelope(
    *, approved: bool, payload: JsonSchema | None, input_schema: JsonSchema | None
) -> JsonSchema:
    """Port of `decisionEnvelope` (`approval-schema.ts`), same keys in the same order."""
    properties: dict[str, JsonSchema] = {"approved": {"const": approved}}
    required = ["approved"]
    if approved and input_schema is not None:
        properties["editedArgs"] = copy.deepcopy(input_schema)
    if payload is not None:
        properties["payload"] = copy.deepcopy(payload)
        required.append("payload")
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def approval_schema(tool: ToolSpec) -> JsonSchema:
    """The `responseSchema` of a `tool_call` interrupt for `tool`."""
    payloads = tool.approval_payloads or ApprovalPayloads()
    return approval_response_schema(tool.parameters, payloads.approve, payloads.reject)
