"""An MCP server's question to the user (`elicitation/create`) as an `input_required`
interrupt, and the person's answer back as the server's elicitation result.

The call that asked raised `ApprovalRequired` with the question (`agents.mcp_servers`);
the interrupt carries the server's message, and as `responseSchema` the server's
requested schema or `false`:
- resolved with a payload that fits the requested schema: MCP `accept` with that content;
- resolved with `false`: MCP `decline` (the person said no: the spec puts a no in the
  payload, as a `confirmation`'s `false`);
- cancelled: MCP `cancel` (the person dismissed it);
- expired or withdrawn: the call does not run again and its result says why (`_asking`).
An answer approves the call with every answer so far: it runs again, in a new MCP session
on any worker, whose elicitation handler gives them to the server.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Final

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from pydantic_ai import DeferredToolResults, ToolApproved
    from pydantic_ai.messages import ToolCallPart
    from pydantic_core import to_jsonable_python

    from ag_ui_temporal.agents.thread import ANSWERS_KEY
    from ag_ui_temporal.workflows.contract import InterruptStatus, WireDict
    from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord

from ag_ui_temporal.workflows.thread.turn import Turn

KIND: Final = "elicit"
"""`data["llm"]` of an interrupt an MCP server's question opened."""
DECLINE: Final[WireDict] = {"const": False, "title": "Decline"}
"""The answer that declines (MCP `decline`), beside the requested schema."""
METADATA_KEY: Final = "mcp:elicitation"
"""`interrupt.metadata[METADATA_KEY]`: `{server, tool, requestedSchema}` for clients that
render the server's form themselves (and offer "Decline" as the payload `false`)."""


def ask(turn: Turn, call: ToolCallPart, question: WireDict) -> None:
    """Open the interrupt for the question the call raised with."""
    requested = question.get("requestedSchema") or {"type": "object"}
    turn.ask(
        reason="input_required",
        message=str(question.get("message") or f"{call.tool_name} needs your input."),
        response_schema={"anyOf": [requested, DECLINE]},
        tool_call_id=call.tool_call_id,
        expires_in=timedelta(seconds=turn.config.input_expires_in_seconds),
        data={
            "llm": KIND,
            "toolCallId": call.tool_call_id,
            "tool": call.tool_name,
            "args": to_jsonable_python(call.args_as_dict()),
            "what": f"the call to {call.tool_name}",
            "question": question,
        },
        metadata={
            METADATA_KEY: {
                "server": question.get("server"),
                "tool": call.tool_name,
                "requestedSchema": requested,
            }
        },
    )


def answered(record: InterruptRecord) -> bool:
    """Whether the server hears back: resolved or cancelled (not expired or withdrawn)."""
    return record.status in (InterruptStatus.RESOLVED, InterruptStatus.CANCELLED)


def approve(results: DeferredToolResults, record: InterruptRecord) -> None:
    """Approve the call again, with the answers so far and this one."""
    call_id = str(record.data["toolCallId"])
    question = record.data["question"]
    answer: dict[str, Any] = {
        "message": question.get("message"),
        "requestedSchema": question.get("requestedSchema"),
        **_action(record),
    }
    results.approvals[call_id] = ToolApproved()
    results.metadata[call_id] = {ANSWERS_KEY: [*question.get("answers", []), answer]}


def _action(record: InterruptRecord) -> dict[str, Any]:
    if record.status == InterruptStatus.CANCELLED or record.resolution is None:
        return {"action": "cancel"}
    payload = record.resolution.payload
    if payload is False:
        return {"action": "decline"}
    return {"action": "accept", "content": payload}
