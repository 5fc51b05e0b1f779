"""Deferred tool calls as interrupts, and the answers as `DeferredToolResults`.

An interrupt's `data` says what the agent needs back: `llm` is the kind of question
(`approval`, `input`: a person supplies the arguments, `external`: a person supplies
the result), with the call's id, tool and arguments.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ag_ui.core import CustomEvent
    from pydantic_ai import DeferredToolResults, ToolApproved, ToolDenied
    from pydantic_ai.messages import ToolCallPart
    from pydantic_ai.tools import ToolDefinition
    from pydantic_core import to_jsonable_python

    from ag_ui_temporal.agents.thread import ASK_KEY, ELICITATION_KEY
    from ag_ui_temporal.workflows.contract import TOOL_CALL_METADATA_KEY, InterruptStatus, WireDict
    from ag_ui_temporal.workflows.contract.tools import (
        CLIENT_TOOL_EVENT,
        WHY_NOT,
        Approval,
        approval,
        filled,
        tool_approval_schema,
    )
    from ag_ui_temporal.workflows.thread.interrupts import CLIENT_TOOL_KEY, InterruptRecord

from ag_ui_temporal.workflows.thread.agents import _client_tools, _elicitation
from ag_ui_temporal.workflows.thread.agents._llm_writer import RunWriter
from ag_ui_temporal.workflows.thread.agents.base import why_not
from ag_ui_temporal.workflows.thread.turn import Turn

SAID_NO = "you said no"
YES_OR_NO: WireDict = {"type": "boolean"}
"""A `confirmation`'s answer: the spec puts a no in the payload (`false`), not a cancel."""


def ask_approval(
    turn: Turn,
    tool: ToolDefinition | None,
    call: ToolCallPart,
    metadata: dict[str, Any],
    *,
    edits: bool = True,
    client: bool = False,
    standing: timedelta | None = None,
) -> None:
    """A call that needs a person's yes (`requires_approval`, `ApprovalRequired`).

    `edits`: whether the approval takes `editedArgs` (the agent's `approve_with_edits`).
    `standing`: the longest standing decision it offers (the agent's `standing_approvals`).
    `client`: a call of the client's own tool (`_client_tools`): once approved, the client
    runs it, and its result comes in a later run."""
    ask = _ask_options(tool, metadata.get(call.tool_call_id))
    if ELICITATION_KEY in ask:  # an MCP server's question to the user
        _elicitation.ask(turn, call, ask[ELICITATION_KEY])
        return
    args = call.args_as_dict()
    parameters = tool.parameters_json_schema if tool else {"type": "object"}
    if ask.get("confirm"):
        turn.ask(
            reason="confirmation",
            message=filled(ask.get("message"), args) or f"Go ahead with {call.tool_name}?",
            response_schema=YES_OR_NO,
            tool_call_id=call.tool_call_id,
            data=_data("confirm", call, args, ask),
        )
        return
    if ask.get("fillsArgs"):
        turn.ask(
            reason="input_required",
            message=filled(ask.get("message"), args) or f"Please fill in {call.tool_name}.",
            response_schema=parameters,
            tool_call_id=call.tool_call_id,
            expires_in=timedelta(seconds=turn.config.input_expires_in_seconds),
            data=_data("input", call, args, ask),
        )
        return
    data = _data("approval", call, args, ask)
    if client:
        parameters = _client_tools.as_hashed(parameters)
        data[CLIENT_TOOL_KEY] = True
    turn.ask(
        reason="tool_call",
        message=filled(ask.get("message"), args) or f"Approve {call.tool_name}?",
        response_schema=tool_approval_schema(
            parameters if edits else None, _reject_payload(ask), standing
        ),
        tool_call_id=call.tool_call_id,
        data=data,
        # the call itself, for clients: the gateway makes it TanStack's `tool-approval` binding
        metadata={TOOL_CALL_METADATA_KEY: {"name": call.tool_name, "arguments": args}},
    )


def ask_result(
    turn: Turn, tool: ToolDefinition | None, call: ToolCallPart, metadata: dict[str, Any]
) -> None:
    """A call executed outside the agent (`CallDeferred`): a person supplies its result,
    shaped by the schema the tool declared (`CallDeferred(metadata={"responseSchema": ...})`
    or the tool's metadata)."""
    ask = _ask_options(tool, metadata.get(call.tool_call_id))
    args = call.args_as_dict()
    schema = (metadata.get(call.tool_call_id) or {}).get("responseSchema") or ask.get(
        "responseSchema"
    )
    turn.ask(
        reason="input_required",
        message=filled(ask.get("message"), args)
        or f"Please provide the result of {call.tool_name}.",
        response_schema=schema,
        tool_call_id=call.tool_call_id,
        data=_data("external", call, args, ask),
    )


def hand_to_client(turn: Turn, call: ToolCallPart, args: dict[str, Any] | None = None) -> None:
    """A call of the client's own tool ends the run; its result comes with the next run.
    TanStack AI's client runs the tool on a `CUSTOM` event besides the call's events, with
    `args` (those a person approved) or the call's own."""
    value = {"toolCallId": call.tool_call_id, "toolName": call.tool_name}
    args = call.args_as_dict() if args is None else args
    turn.emit(CustomEvent(name=CLIENT_TOOL_EVENT, value={**value, "input": args}))


def deferred_results(group: list[InterruptRecord]) -> DeferredToolResults:
    results = DeferredToolResults()
    for record in group:
        call_id = str(record.data["toolCallId"])
        answered = record.status == InterruptStatus.RESOLVED and record.resolution is not None
        payload = record.resolution.payload if answered and record.resolution else None
        kind = record.data["llm"]
        if kind == "external":
            results.calls[call_id] = payload if answered else WHY_NOT[record.status]
        elif kind == "input" and answered:
            results.approvals[call_id] = ToolApproved(override_args=payload)
        elif kind == "confirm" and answered:
            results.approvals[call_id] = ToolApproved() if payload is True else ToolDenied(SAID_NO)
        elif kind == _elicitation.KIND and _elicitation.answered(record):
            _elicitation.approve(results, record)
        elif kind == "approval" and answered and (decided := approval(payload)) is not None:
            results.approvals[call_id] = (
                ToolApproved(override_args=decided.edited_args)
                if decided.approved
                else ToolDenied(_rejected(decided))
            )
        else:
            results.approvals[call_id] = ToolDenied(WHY_NOT[record.status])
    return results


def all_refused(results: DeferredToolResults) -> bool:
    """Whether a person refused every call asked about: nothing runs, no result to use."""
    answers = results.approvals.values()
    return bool(answers) and not results.calls and all(isinstance(a, ToolDenied) for a in answers)


def close_out(
    turn: Turn, group: list[InterruptRecord], results: DeferredToolResults | None = None
) -> None:
    """Calls that will not run: their results in the transcript (the model reads them on
    the next run) and a sentence for the user. Why each did not run: its denial in
    `results`, or how its interrupt ended (settled between runs)."""
    writer = RunWriter(turn)
    said = []
    for record in group:
        denial = results.approvals.get(str(record.data["toolCallId"])) if results else None
        why = denial.message if isinstance(denial, ToolDenied) else why_not(record)
        writer.report_result(str(record.data["toolCallId"]), why)
        said.append(f"I did not carry out {record.data.get('what')}: {why}.")
    turn.say(" ".join(said))


def as_text(output: object) -> str:
    """A structured output as the assistant's message."""
    return json.dumps(to_jsonable_python(output))


def _reject_payload(ask: WireDict) -> WireDict | None:
    """The schema of what a rejection carries (`ask_person(reject_payload=...)`)."""
    reject = ask.get("rejectPayload")
    return reject if isinstance(reject, dict) else None


def _rejected(decided: Approval) -> str:
    """What the model hears of a rejection: "you rejected it", and the person's note when the
    reject branch carried one (only a tool with `reject_payload` takes one)."""
    if not decided.note:
        return WHY_NOT[InterruptStatus.RESOLVED]
    return decided.why_not


def _ask_options(tool: ToolDefinition | None, call_metadata: Any) -> WireDict:
    options: WireDict = {}
    if tool is not None and tool.metadata:
        options.update(tool.metadata.get(ASK_KEY) or {})
    if isinstance(call_metadata, dict):
        options.update(call_metadata.get(ASK_KEY) or {})
    return options


def _data(kind: str, call: ToolCallPart, args: dict[str, Any], ask: WireDict) -> WireDict:
    what = filled(ask.get("what"), args) or f"the call to {call.tool_name}"
    return {
        "llm": kind,
        "toolCallId": call.tool_call_id,
        "tool": call.tool_name,
        "args": to_jsonable_python(args),
        "what": what,
    }
