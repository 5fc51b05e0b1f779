"""The demo agent's tools: names, argument schemas and how a person takes part.

Pure data, shared by the agent (which offers the interrupts), the activities
(which do the work) and the published TypeScript definitions in `examples/tools/`.
What the gateway needs to bind tool approvals for TanStack AI (the metadata key,
the approval envelope) is in `workflows.contract.tools`.

Each tool's `parameters` is the single source of truth for its arguments. The
TypeScript definition of the tool must make zod produce exactly this JSON
Schema (`~standard.jsonSchema.input({target: "draft-2020-12"})`, `$schema`
included), because TanStack AI hashes that JSON to decide whether a client's
registered tool is the one the server asked about;
`tests/gateway/test_tool_definitions_drift.py` fails on any drift.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from ag_ui_temporal.workflows.contract.tools import TOOL_CALL_METADATA_KEY as TOOL_CALL_METADATA_KEY
from ag_ui_temporal.workflows.contract.tools import JsonSchema, approval_response_schema

JSON_SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
"""The `$schema` zod writes for target draft-2020-12 (and so part of the hashed schema)."""

MAX_SAFE_INTEGER: Final = 2**53 - 1
"""zod's bound for `z.int()`: larger integers are not exact in a JavaScript client."""


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


def approval_schema(tool: ToolSpec) -> JsonSchema:
    """The `responseSchema` of a `tool_call` interrupt for `tool`."""
    payloads = tool.approval_payloads or ApprovalPayloads()
    return approval_response_schema(tool.parameters, payloads.approve, payloads.reject)
