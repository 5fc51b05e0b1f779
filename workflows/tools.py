"""The demo agent's tools: names, argument schemas and how a person takes part.

Pure data, shared by the agent (which offers the interrupts), the activities
(which do the work) and the published TypeScript definitions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

JsonSchema = dict[str, Any]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: JsonSchema
    human: Literal["approval", "input"]
    """`approval`: a person approves (or edits) the call; `input`: a person supplies the args."""


SEND_EMAIL = ToolSpec(
    name="sendEmail",
    description="Send an email on the user's behalf.",
    parameters={
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
    "type": "object",
    "properties": {
        "quarter": {"type": "string", "enum": ["Q1", "Q2", "Q3", "Q4"]},
        "year": {"type": "integer", "minimum": 2000},
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

TOOLS: dict[str, ToolSpec] = {tool.name: tool for tool in (SEND_EMAIL, FILE_QUARTERLY_REPORT)}


def approval_schema(tool: ToolSpec) -> JsonSchema:
    """AG-UI approve-with-edits: `approved` required, `editedArgs` replaces the args whole."""
    return {
        "type": "object",
        "properties": {
            "approved": {"type": "boolean"},
            "editedArgs": tool.parameters,
        },
        "required": ["approved"],
        "additionalProperties": False,
    }
