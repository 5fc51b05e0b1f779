"""What an ADK run pauses to ask a person, and each answer as the part that resumes ADK (the
workflow side of `adk_agent`).

ADK's own requests are read with the integration's `pending_hitl_requests`: a tool's
confirmation (`adk_request_confirmation`) and a request for input (`adk_request_input`), each
answered with the integration's `hitl_confirmation_response` / `hitl_input_response`. A
long-running tool's call that got no result yet (`Waiting`) is answered with the call's
function response, the result a person gave.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from google.adk.events import Event
    from google.genai import types
    from temporalio.google_adk import HitlRequest, hitl_confirmation_response, hitl_input_response

    from ag_ui_temporal.workflows.contract import InterruptStatus
    from ag_ui_temporal.workflows.contract.tools import WHY_NOT, approval
    from ag_ui_temporal.workflows.schema import schema_problem
    from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord

KEY: Final = "adk"
"""`InterruptRecord.data` key: the id of the ADK request it answers (`HitlRequest.interrupt_id`)."""
INPUT: Final = "adk:input"
"""`InterruptRecord.data` key, set on a request for input (not a tool's confirmation)."""
NOTE: Final = "ag-ui-temporal:note"
"""A rejection's `ToolConfirmation.payload` key: its note, which the model reads."""
NO_SCHEMA: Final = {"type": "string"}
"""Free text: the answer to a long-running tool's call, or to a request for input whose schema
is missing or no JSON Schema."""
TOOL: Final = "adk:tool"
"""`InterruptRecord.data` key, set on a long-running tool's call that waits for a person: the
tool's name (the answer is its function response)."""
ADK_CALLS: Final = frozenset(
    {"adk_request_confirmation", "adk_request_input", "adk_request_credential"}
)
"""ADK's own long-running calls: its HITL requests (`pending_hitl_requests`), and a request
for credentials, which a thread does not ask (the secret would be in its history)."""


@dataclass(frozen=True)
class Waiting:
    """A long-running tool's call the run paused on (an ADK `LongRunningFunctionTool` whose
    function gave no result yet): whoever is asked gives its result."""

    call_id: str
    tool: str
    args: dict[str, Any]


Question: TypeAlias = HitlRequest | Waiting
"""What a run pauses to ask: ADK's HITL requests, and the calls of its long-running tools."""


def question_id(question: Question) -> str:
    """The id its answer goes back to ADK under."""
    return question.call_id if isinstance(question, Waiting) else question.interrupt_id


def long_running(event: Event) -> dict[str, Waiting]:
    """The calls of long-running tools an event makes (ADK's own requests aside), by id."""
    ids = event.long_running_tool_ids or set()
    if not ids or event.partial or event.content is None:
        return {}
    calls = (part.function_call for part in event.content.parts or ())
    return {
        call.id: Waiting(call.id, call.name or "", dict(call.args or {}))
        for call in calls
        if call is not None and call.id in ids and call.name not in ADK_CALLS
    }


def answer(record: InterruptRecord) -> types.Part:
    """The part answering the request `record` asked about."""
    request_id = str(record.data[KEY])
    answer = record.resolution
    if TOOL in record.data:  # a long-running tool's result: any answer; a dict as it is
        given = answer.payload if record.status == InterruptStatus.RESOLVED and answer else None
        result = {"error": WHY_NOT[record.status]} if given is None else _result(given)
        return _function_response(request_id, str(record.data[TOOL]), result)
    if record.data.get(INPUT):
        if record.status == InterruptStatus.RESOLVED and answer is not None:
            return hitl_input_response(request_id, answer.payload)
        return hitl_input_response(request_id, {"error": WHY_NOT[record.status]})
    decided = approval(answer.payload) if answer is not None else None
    if record.status == InterruptStatus.RESOLVED and decided is not None:
        if decided.approved:
            return hitl_confirmation_response(request_id, confirmed=True)
        return hitl_confirmation_response(
            request_id, confirmed=False, payload={NOTE: decided.why_not}
        )
    return hitl_confirmation_response(
        request_id, confirmed=False, payload={NOTE: WHY_NOT[record.status]}
    )


def unanswered(request: Question, status: InterruptStatus) -> types.Part:
    """The part answering `request`, asked between runs, as nobody there."""
    why = WHY_NOT[status]
    if isinstance(request, Waiting):
        return _function_response(request.call_id, request.tool, {"error": why})
    if request.kind == "input":
        return hitl_input_response(request.interrupt_id, {"error": why})
    return hitl_confirmation_response(request.interrupt_id, confirmed=False, payload={NOTE: why})


def _function_response(call_id: str, tool: str, result: dict[str, Any]) -> types.Part:
    return types.Part(
        function_response=types.FunctionResponse(id=call_id, name=tool, response=result)
    )


def _result(given: Any) -> dict[str, Any]:
    """A person's answer as a function's result, which ADK takes as a dict."""
    return given if isinstance(given, dict) else {"result": given}


def input_schema(schema: Any) -> dict[str, Any]:
    """The schema the agent gave a request for input, if it is one; else free text."""
    if isinstance(schema, dict) and schema and schema_problem(schema) is None:
        return schema
    return dict(NO_SCHEMA)
