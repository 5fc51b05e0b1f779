"""What a tool-call interrupt carries for the gateway's TanStack binding, and how every
agent kind reads the person's answer.

The demo tools themselves live in `ag_ui_temporal/demo/tools.py`; the gateway only needs
the metadata key naming the call and the shape of an approval's response schema. An
approval's answer is decoded by `approval` alone, for a pydantic-ai agent
(`workflows.thread.agents._asking`) as for a LangGraph graph (`agents.decisions.tool_decision`)
and an OpenAI Agents SDK agent (`workflows.thread.agents.openai_agent`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from ag_ui_temporal.workflows.contract.standing import STANDING_KEY, standing_schema
from ag_ui_temporal.workflows.contract.view import InterruptStatus

JsonSchema = dict[str, Any]

WHY_NOT: Final[dict[InterruptStatus, str]] = {
    InterruptStatus.RESOLVED: "you rejected it",
    InterruptStatus.CANCELLED: "it was cancelled",
    InterruptStatus.EXPIRED: "nobody answered before it expired",
    InterruptStatus.WITHDRAWN: "it was withdrawn",
}
"""Why a call did not run, as the model (and the user) hears it."""
NOTE_MAX_CHARS: Final = 200
"""The most of a rejection's note the model hears (and the user reads in the run's sentence):
a person's words go into the model's context, so they are bounded and kept to one line."""
NOTE_KEYS: Final = ("reason", "note")
"""Where a rejection payload that is an object carries its note (the first string wins)."""


@dataclass(frozen=True)
class Approval:
    """A person's answer to a `tool_call` interrupt (TanStack's approval envelope), read."""

    approved: bool
    edited_args: dict[str, Any] | None = None
    """The arguments to run the call with instead of the model's (whole), if the person
    edited them."""
    note: str = ""
    """Why the person rejected the call: one line, at most `NOTE_MAX_CHARS` ("": none)."""

    @property
    def why_not(self) -> str:
        """What the model hears of a rejection: "you rejected it", and the note if any."""
        rejected = WHY_NOT[InterruptStatus.RESOLVED]
        return f"{rejected}: {self.note}" if self.note else rejected


def approval(payload: Any) -> Approval | None:
    """`payload` read as an approval, or None if it is none (no object with a boolean
    `approved`, which the thread refuses as the answer of a `tool_call`). A rejection's note
    is its `payload`: a string, or an object's `reason` or `note`."""
    if not isinstance(payload, dict) or not isinstance(payload.get("approved"), bool):
        return None
    if payload["approved"]:
        edited = payload.get("editedArgs")
        return Approval(True, edited_args=dict(edited) if isinstance(edited, dict) else None)
    return Approval(False, note=_note(payload.get("payload")))


def _note(payload: Any) -> str:
    if isinstance(payload, dict):
        payload = next((payload[k] for k in NOTE_KEYS if isinstance(payload.get(k), str)), None)
    if not isinstance(payload, str):
        return ""
    line = " ".join(payload.split())
    return line if len(line) <= NOTE_MAX_CHARS else line[: NOTE_MAX_CHARS - 1] + "…"


TOOL_CALL_METADATA_KEY: Final = "ag-ui-temporal:toolCall"
"""`Interrupt.metadata` key of a `tool_call` interrupt: `{"name", "arguments"}` of the call.

The gateway reads it to build TanStack's `tool-approval` binding (`toolName`,
`originalArgs`); other AG-UI clients can show it as is.
"""


CLIENT_TOOL_EVENT: Final = "tool-input-available"
"""The name of the `CUSTOM` event that follows the call of a client's own tool: TanStack AI's
`ChatClient` runs the tool's `execute` on it (other AG-UI clients ignore it and run the
call from its `TOOL_CALL_*` events)."""


def filled(template: str | None, args: dict[str, Any]) -> str | None:
    """A question about a tool call, its `{name}` fields filled from the call's arguments (an
    agent's `ask_person(message=...)`, a graph's `ask_tool_call(message=...)`); the template
    as is if they do not fit (a model may leave arguments out); None for no template."""
    if not template:
        return None
    try:
        return template.format_map(args)
    except (KeyError, IndexError, ValueError, AttributeError):
        return template


def approval_response_schema(
    input_schema: JsonSchema | None,
    approve: JsonSchema | None = None,
    reject: JsonSchema | None = None,
    standing: timedelta | None = None,
) -> JsonSchema:
    """TanStack AI's approval response envelope (`normalizeApprovalSchema(...).responseSchema`).

    `oneOf` an approve envelope `{approved: true, editedArgs?, payload?}` and a
    reject envelope `{approved: false, payload?}`, each closed. `editedArgs`
    replaces the arguments whole, so AG-UI approve-with-edits
    (`{"approved": true, "editedArgs": {...}}`) is the approve envelope. `standing`: each
    envelope also takes a standing decision up to that long (`contract.standing`), which
    TanStack's envelope has no room for (its client shows such an approval as a generic item).
    """
    return {
        "oneOf": [
            _decision_envelope(
                approved=True, payload=approve, input_schema=input_schema, standing=standing
            ),
            _decision_envelope(
                approved=False, payload=reject, input_schema=None, standing=standing
            ),
        ]
    }


def tool_approval_schema(
    parameters: JsonSchema | None, reject: JsonSchema | None, standing: timedelta | None = None
) -> JsonSchema:
    """The `responseSchema` of a `tool_call` interrupt about a tool with input schema
    `parameters` (None: the approval takes no `editedArgs`) and rejection payload `reject`:
    what an agent's and a graph's approvals announce, and what a client's tool definition must
    hash like (`gateway.tanstack`). pydantic-ai puts nested models under the parameters'
    `$defs`, which their `$ref`s name from the root: the definitions move to the envelope's
    root, where those refs now point (TanStack cannot build such an envelope: those approvals
    are generic items on its client). `standing`: the longest standing decision the agent's
    registration offers (None: none)."""
    if parameters is None:
        return approval_response_schema(None, reject=reject, standing=standing)
    definitions = parameters.get("$defs")
    inner = {key: value for key, value in parameters.items() if key != "$defs"}
    envelope = approval_response_schema(inner, reject=reject, standing=standing)
    return {**envelope, "$defs": definitions} if definitions else envelope


def _decision_envelope(
    *,
    approved: bool,
    payload: JsonSchema | None,
    input_schema: JsonSchema | None,
    standing: timedelta | None = None,
) -> JsonSchema:
    """Port of `decisionEnvelope` (`approval-schema.ts`), same keys in the same order; a
    standing decision's property last, never required."""
    properties: dict[str, JsonSchema] = {"approved": {"const": approved}}
    required = ["approved"]
    if approved and input_schema is not None:
        properties["editedArgs"] = copy.deepcopy(input_schema)
    if payload is not None:
        properties["payload"] = copy.deepcopy(payload)
        required.append("payload")
    if standing is not None:
        properties[STANDING_KEY] = standing_schema(standing)
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
