"""One reading of an approval's answer for every agent kind (`contract.tools.approval`): what
a LangGraph graph hears of a rejection (`agents.decisions.tool_decision`, `ask_tool_call`'s
answer) is what a pydantic-ai agent hears (`workflows.thread.agents._asking`, proven through
a worker in `test_approval_options.py`): a note on one line, at most `NOTE_MAX_CHARS`."""

from __future__ import annotations

from typing import Any

import pytest

from ag_ui_temporal.agents.decisions import UNANSWERED, tool_decision
from ag_ui_temporal.workflows.contract.tools import NOTE_MAX_CHARS, approval

ARGS = {"to": "ada@example.com"}
REJECTED = "you rejected it"


@pytest.mark.parametrize(
    "payload",
    [{"reason": "no " * 600}, {"note": "no " * 600}, "no " * 600],
    ids=["reason", "note", "string"],
)
def test_a_long_note_is_bounded_for_a_graph_as_for_an_agent(payload: Any):
    answer = {"approved": False, "payload": payload}
    decision = tool_decision(answer, ARGS)
    assert (decision.approved, decision.args) == (False, ARGS)
    heard = decision.why_not or ""
    assert heard.startswith(f"{REJECTED}: no no") and heard.endswith("…")
    assert len(heard) == len(f"{REJECTED}: ") + NOTE_MAX_CHARS
    decided = approval(answer)
    assert decided is not None and heard == decided.why_not  # the agent's words, to the letter


def test_a_note_is_one_line_and_a_missing_one_is_no_note():
    spread = {"approved": False, "payload": {"reason": "  it still holds\nlast year's\taudit "}}
    assert tool_decision(spread, ARGS).why_not == f"{REJECTED}: it still holds last year's audit"
    for bare in ({"approved": False}, {"approved": False, "payload": {"reason": 7}}, "no"):
        assert tool_decision(bare, ARGS).why_not == REJECTED


def test_approvals_and_the_unanswered():
    assert tool_decision({"approved": True}, ARGS).args == ARGS
    edited = tool_decision({"approved": True, "editedArgs": {"to": "bob@example.com"}}, ARGS)
    assert (edited.approved, edited.args) == (True, {"to": "bob@example.com"})
    expired = tool_decision({UNANSWERED: "expired"}, ARGS)
    assert (expired.approved, expired.why_not) == (False, "nobody answered before it expired")
    assert tool_decision({UNANSWERED: "cancelled"}, ARGS).why_not == "it was cancelled"
    assert approval({"approved": "yes"}) is None  # no approval: the thread refuses it
