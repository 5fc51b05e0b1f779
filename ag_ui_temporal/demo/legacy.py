"""The scripted `assistant`, for the threads that began on it.

Their histories, recorded without `LLM_ASSISTANT_PATCH`, replay through it, and the
interrupts it opened are carried out by it when their answers come, however long after a
deploy. New messages go to the pydantic-ai agent (`demo.assistant`), never here.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any, Final

from ag_ui_temporal.demo.scripted_model import Model, ScriptedModel
from ag_ui_temporal.demo.tools import TOOL_CALL_METADATA_KEY, TOOLS, ToolSpec, approval_schema
from ag_ui_temporal.workflows.contract import InterruptStatus
from ag_ui_temporal.workflows.patches import (
    CALLS_PER_RESPONSE_PATCH,
    TANSTACK_APPROVALS_PATCH,
    patched,
)
from ag_ui_temporal.workflows.thread.state import InterruptRecord
from ag_ui_temporal.workflows.thread.tool_errors import ToolFailed
from ag_ui_temporal.workflows.thread.turn import InterruptLimitExceeded, Turn

_PRE_TANSTACK_APPROVALS: Final[dict[str, dict[str, Any]]] = {
    "sendEmail": {
        "type": "object",
        "properties": {
            "approved": {"type": "boolean"},
            "editedArgs": {
                "type": "object",
                "properties": {
                    "to": {"type": "string", "format": "email"},
                    "subject": {"type": "string"},
                    "body": {"type": "string"},
                },
                "required": ["to", "subject", "body"],
                "additionalProperties": False,
            },
        },
        "required": ["approved"],
        "additionalProperties": False,
    },
    "fileQuarterlyReport": {
        "type": "object",
        "properties": {
            "quarter": {"type": "string", "enum": ["Q1", "Q2", "Q3", "Q4"]},
            "year": {"type": "integer", "minimum": 2000},
            "revenue": {"type": "number"},
        },
        "required": ["quarter", "year", "revenue"],
        "additionalProperties": False,
    },
}
"""The `responseSchema`s the assistant announced before `TANSTACK_APPROVALS_PATCH`, verbatim."""


class LegacyAssistant:
    def __init__(self, model: Model | None = None) -> None:
        self.model = model or ScriptedModel()

    async def on_user_message(self, turn: Turn, text: str) -> None:
        reply = await self.model.respond(turn.messages)
        limit = turn.config.max_interrupts_per_run
        if len(reply.tool_calls) > limit and patched(CALLS_PER_RESPONSE_PATCH):
            raise InterruptLimitExceeded(f"an agent may make at most {limit} tool calls at once")
        if reply.text:
            turn.say(reply.text)
        if reply.tool_calls:
            for call in turn.call_tools(reply.tool_calls):
                self._ask_person(
                    turn,
                    call["id"],
                    TOOLS[call["function"]["name"]],
                    json.loads(call["function"]["arguments"]),
                )

    def _ask_person(self, turn: Turn, call_id: str, tool: ToolSpec, args: dict[str, Any]) -> None:
        data: dict[str, Any] = {"tool": tool.name, "args": args, "toolCallId": call_id}
        current = patched(TANSTACK_APPROVALS_PATCH)
        if tool.name == "submitExpense":
            data["requester"] = turn.principal
            message = (
                f"Approve submitExpense: {args['amount']} {args['currency']} "
                f"for {args['description']}?"
            )
        else:
            message = f"Approve {tool.name} to {args.get('to', '?')}: {args.get('body', '')!r}?"
        if tool.human == "approval":
            turn.ask(
                reason="tool_call",
                message=message,
                response_schema=(
                    approval_schema(tool) if current else _PRE_TANSTACK_APPROVALS[tool.name]
                ),
                tool_call_id=call_id,
                data=data,
                # The call itself, for clients: the gateway turns it into
                # TanStack's `tool-approval` binding (toolName, originalArgs).
                metadata=(
                    {TOOL_CALL_METADATA_KEY: {"name": tool.name, "arguments": dict(args)}}
                    if current
                    else None
                ),
            )
        else:
            turn.ask(
                reason="input_required",
                message="Please fill in the quarterly report: quarter, year and revenue.",
                response_schema=(
                    tool.parameters if current else _PRE_TANSTACK_APPROVALS[tool.name]
                ),
                tool_call_id=call_id,
                expires_in=timedelta(seconds=turn.config.input_expires_in_seconds),
                data=data,
            )

    async def on_client_results(self, turn: Turn) -> None:
        """The scripted assistant called no client tools."""

    def on_stream(self, batch: object) -> None:
        """The scripted model ran in the workflow: nothing streamed."""

    async def on_settled(self, turn: Turn, settled: list[InterruptRecord]) -> None:
        summary = [await self._carry_out(turn, record) for record in settled]
        turn.say(" ".join(summary))

    async def _carry_out(self, turn: Turn, record: InterruptRecord) -> str:
        """One settled call; a tool that failed for good is reported, and the batch goes on."""
        try:
            return await self._finish(turn, record)
        except ToolFailed as failed:
            assert record.resolution is not None  # only an approved call runs
            payload = record.resolution.payload
            edited = payload.get("editedArgs") if isinstance(payload, dict) else None
            what = _what(record.data["tool"], edited or record.data["args"])
            error = failed.error
            return (
                f"I could not carry out {what} ({error['type']}: {error['message']}). "
                "You can ask me again."
            )

    def on_run_end(
        self, turn: Turn, *, posted: int, settled: int, waiting: list[InterruptRecord]
    ) -> None:
        """The assistant has said what it had to in its handlers."""

    async def _finish(self, turn: Turn, record: InterruptRecord) -> str:
        """Carry out (or drop) the tool call behind one settled interrupt; say what happened."""
        tool = TOOLS[record.data["tool"]]
        args: dict[str, Any] = record.data["args"]
        if record.status == InterruptStatus.RESOLVED:
            assert record.resolution is not None  # a resolved interrupt keeps its answer
            payload = record.resolution.payload  # valid against the interrupt's schema
            if tool.human == "input":
                result = await turn.execute(record.data["toolCallId"], tool.name, payload)
                return (
                    f"Filed the {result['quarter']} {result['year']} quarterly report "
                    f"(revenue {payload['revenue']})."
                )
            if payload["approved"]:
                args = payload.get("editedArgs") or args
                if tool.name == "submitExpense":
                    return await self._submit_expense(turn, record, args)
                await turn.execute(record.data["toolCallId"], tool.name, args)
                return f"Sent the email to {args['to']} ({args['subject']!r})."
        what = _what(tool.name, args)
        why = {
            InterruptStatus.RESOLVED: "you rejected it",
            InterruptStatus.CANCELLED: "it was cancelled",
            InterruptStatus.EXPIRED: "nobody answered before it expired",
        }[record.status]
        return f"I did not carry out {what}: {why}."

    async def _submit_expense(
        self, turn: Turn, record: InterruptRecord, args: dict[str, Any]
    ) -> str:
        """Start the expense's approval chain (once per tool call: the activity's key)."""
        requester = record.data.get("requester") or turn.principal
        result = await turn.execute(
            record.data["toolCallId"],
            "submitExpense",
            {**args, "requester": requester, "threadId": turn.log.state.thread_id},
        )
        return (
            f"Submitted the expense ({args['amount']} {args['currency']} for "
            f"{args['description']}) for approval as {result['chainId']}. "
            "I will tell you here when it is decided."
        )


def _what(tool: str, args: dict[str, Any]) -> str:
    """A tool call as the assistant names it to the user."""
    return {
        "fileQuarterlyReport": "the quarterly report",
        "submitExpense": f"the expense ({args.get('amount')} {args.get('currency')})",
    }.get(tool, f"the email to {args.get('to')}")
