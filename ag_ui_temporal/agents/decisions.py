"""What a person decided about a tool call, as an agent framework's own code hears it: a
LangGraph node (`agents.graphs.ask_tool_call`) resumes with the interrupt's answer, which
this reads; a framework whose code asks for itself (a Strands hook) would read it the same.

The answer is the payload as the person sent it (TanStack's approval envelope, read by
`contract.tools.approval`, the rule every agent kind shares), or, for an interrupt nobody
answered, `{UNANSWERED: "cancelled" | "expired"}` (`not_answered` reads it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from ag_ui_temporal.workflows.contract import InterruptStatus
from ag_ui_temporal.workflows.contract.tools import WHY_NOT, approval

UNANSWERED: Final = "ag-ui-temporal:unanswered"
"""The key of the resume value of an interrupt nobody answered: `{UNANSWERED: status}`."""


@dataclass(frozen=True)
class ToolDecision:
    """What a person decided about a tool call."""

    approved: bool
    args: dict[str, Any]
    """The arguments to run the call with: the model's, or the person's edits (whole)."""
    why_not: str | None = None
    """Why it does not run, as the model should hear it (None when approved)."""


def tool_decision(answer: Any, args: dict[str, Any]) -> ToolDecision:
    """The decision a `tool_call` interrupt's answer carries (a rejection's note is bounded)."""
    if (status := not_answered(answer)) is not None:
        why = next((why for each, why in WHY_NOT.items() if each == status), f"it was {status}")
        return ToolDecision(False, args, why)
    decided = approval(answer)
    if decided is not None and decided.approved:
        return ToolDecision(True, args if decided.edited_args is None else decided.edited_args)
    why = decided.why_not if decided is not None else WHY_NOT[InterruptStatus.RESOLVED]
    return ToolDecision(False, args, why)


def not_answered(answer: Any) -> str | None:
    """`"cancelled"` or `"expired"` when `answer` (what the framework resumed with) says nobody
    answered; None for a person's answer."""
    if isinstance(answer, dict) and isinstance(status := answer.get(UNANSWERED), str):
        return status
    return None
