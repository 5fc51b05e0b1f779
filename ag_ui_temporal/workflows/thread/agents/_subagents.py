"""A delegated call (`agents.delegation`) as the inner agent's interrupts, and back.

When the outer agent's call of a `delegate` tool ends asking (`ApprovalRequired` carrying
an `InnerRun`), the thread asks about each of the inner run's deferred calls exactly as
it asks about the outer agent's own (`_asking`: approval, form, confirmation, external
result), except that each interrupt
- carries `subagentRunId` (the inner run) and `metadata["ag-ui-temporal:subagent"]`
  (the inner agent's name and the call), which clients show as "asked by <name>";
- names the outer call as its `toolCallId`: the call the client saw, and the one whose
  result the resumed run reports;
- keeps the inner question's `data` under `inner` (`llm: "subagent"` outside), and the
  first of them the inner run's history, bounded by `MAX_HISTORY_CHARS`.

Once all are settled, `deferred_results` approves the outer call with the inner run's
history and the inner `DeferredToolResults` as its metadata: the delegate tool resumes
the inner run from them.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Final, Unpack

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from pydantic_ai import DeferredToolResults, ToolApproved
    from pydantic_ai.messages import ToolCallPart

    from ag_ui_temporal.agents.delegation import SUBAGENT_KEY, InnerRun, resumption
    from ag_ui_temporal.workflows.contract import (
        TOOL_CALL_METADATA_KEY,
        InterruptFields,
        WireDict,
    )
    from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord

from ag_ui_temporal.workflows._interrupt import InvalidInterrupt
from ag_ui_temporal.workflows.thread.agents import _asking
from ag_ui_temporal.workflows.thread.turn import Turn

KIND: Final = "subagent"
"""`data["llm"]` of an interrupt a sub-agent asked."""
SUBAGENT_METADATA_KEY: Final = "ag-ui-temporal:subagent"
"""`{name, runId, toolName, arguments}`: who asks, about which of its calls."""
MAX_HISTORY_CHARS: Final = 64_000
"""The most of an inner run's history the thread keeps while its questions wait."""


def delegated(metadata: Any) -> InnerRun | None:
    """The inner run a deferred call of the outer agent carries, if it is a delegation."""
    inner = metadata.get(SUBAGENT_KEY) if isinstance(metadata, dict) else None
    return inner if isinstance(inner, InnerRun) else None


def ask_inner(turn: Turn, outer: ToolCallPart, inner: InnerRun, *, edits: bool = True) -> None:
    """One interrupt per deferred call of the inner run; raises `InvalidInterrupt` for an
    inner run whose history is over budget. `edits`: whether approvals take `editedArgs`
    (the thread's agent's promise)."""
    if len(inner.history) > MAX_HISTORY_CHARS:
        raise InvalidInterrupt(
            f"sub-agent {inner.agent!r} asks with a history of {len(inner.history)} characters, "
            f"over the {MAX_HISTORY_CHARS} a waiting thread keeps"
        )
    on_behalf = _InnerTurn(turn, outer.tool_call_id, inner)
    requests = inner.requests
    for call in requests.approvals:
        _asking.ask_approval(
            on_behalf, inner.tools.get(call.tool_name), call, requests.metadata, edits=edits
        )
    for call in requests.calls:
        _asking.ask_result(on_behalf, inner.tools.get(call.tool_name), call, requests.metadata)


def deferred_results(group: list[InterruptRecord]) -> DeferredToolResults:
    """`_asking.deferred_results` of the outer agent's own calls, and each delegated call
    approved with its inner run's answers."""
    own = [record for record in group if record.data.get("llm") != KIND]
    results = _asking.deferred_results(own)
    outer_calls: dict[str, list[InterruptRecord]] = {}
    for record in group:
        if record.data.get("llm") == KIND:
            outer_calls.setdefault(str(record.data["toolCallId"]), []).append(record)
    for call_id, records in outer_calls.items():
        run = next(r.data["subagent"] for r in records if "subagent" in r.data)
        views = [r.model_copy(update={"data": r.data["inner"]}) for r in records]
        answers = _asking.deferred_results(views)
        results.approvals[call_id] = ToolApproved()
        results.metadata[call_id] = resumption(run["agent"], run["runId"], run["history"], answers)
    return results


class _InnerTurn(Turn):
    """The thread's turn, asking on the inner agent's behalf."""

    def __init__(self, turn: Turn, outer_call_id: str, inner: InnerRun) -> None:
        super().__init__(turn.log, turn.run_id, turn.config, turn.principal, turn.client_tools)
        self.outer_call_id = outer_call_id
        self.inner = inner
        self.kept = False
        """Whether an interrupt keeps the inner run's history already (the first does)."""

    def ask(
        self,
        *,
        reason: str,
        message: str,
        expires_in: timedelta | None = None,
        data: WireDict | None = None,
        **fields: Unpack[InterruptFields],
    ) -> InterruptRecord:
        question = data or {}
        # the inner call is not one the client saw: no TanStack tool-approval binding for it
        metadata = fields.get("metadata") or {}
        shown = {k: v for k, v in metadata.items() if k != TOOL_CALL_METADATA_KEY}
        shown[SUBAGENT_METADATA_KEY] = {
            "name": self.inner.agent,
            "runId": self.inner.run_id,
            "toolName": question.get("tool"),
            "arguments": question.get("args"),
        }
        record_data: WireDict = {
            "llm": KIND,
            "toolCallId": self.outer_call_id,
            "what": f"{question.get('what')} (asked by {self.inner.agent})",
            "inner": question,
        }
        if not self.kept:
            self.kept = True
            record_data["subagent"] = {
                "agent": self.inner.agent,
                "runId": self.inner.run_id,
                "history": self.inner.history,
            }
        return super().ask(
            reason=reason,
            message=message,
            response_schema=fields.get("response_schema"),
            tool_call_id=self.outer_call_id,
            expires_in=expires_in,
            data=record_data,
            metadata=shown,
            subagent_run_id=self.inner.run_id,
        )
