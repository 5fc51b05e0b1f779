"""What an interrupt is asked with: the one list of its optional fields.

Every asker takes them as keywords and passes them on untouched: an agent (`Turn.ask`), a
sub-agent (`agents._subagents`), a producer (`offer_in_thread`), down to the one builder of
the wire `Interrupt` (`workflows._interrupt.new_interrupt`). `reason`, `message` and the
expiry stay each asker's own parameters: the reason's default, and whether the deadline is
an instant or a duration from the workflow's clock, differ between them.
"""

from __future__ import annotations

from typing import Any, TypedDict

from ag_ui_temporal.workflows.contract.names import WireDict


class OfferedFields(TypedDict, total=False):
    """What any asker may say of its interrupt besides its reason, message and expiry."""

    response_schema: dict[str, Any] | None
    """`responseSchema`: what the answer's payload must validate against (None: any value; a
    `confirmation` without one expects `{"type": "boolean"}`)."""
    metadata: WireDict | None
    """`metadata`: what clients may show beside the question."""
    subagent_run_id: str | None
    """`subagentRunId`: the run of the sub-agent that asks (clients say which agent asks)."""


class InterruptFields(OfferedFields, total=False):
    """An agent's interrupt, which may be about one of its own tool calls."""

    tool_call_id: str | None
    """`toolCallId`: the call a `tool_call` interrupt (or a form that fills a call's
    arguments) is about. A producer's offer names no call of the thread's."""
