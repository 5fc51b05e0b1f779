"""The offline demo model, driven by a plain pydantic-ai `Agent` (no Temporal): it reads the
demo's sentences into the old assistant's tool calls, and its replies are the old texts."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from pydantic_ai import (
    Agent,
    AgentStreamEvent,
    CallDeferred,
    DeferredToolRequests,
    DeferredToolResults,
    PartDeltaEvent,
    PartStartEvent,
    RunContext,
    TextPart,
    TextPartDelta,
    ToolApproved,
    ToolDenied,
)
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import ExternalToolset

from ag_ui_temporal.demo.offline import PICK_DATE_QUESTION, offline_model, reply_to
from ag_ui_temporal.demo.sentences import HELP

Output = str | DeferredToolRequests
CALL_ID = re.compile(r"call_[0-9a-f]{32}")
PICK_DATE = ToolDefinition(
    name="pickDate",
    parameters_json_schema={"type": "object", "properties": {"question": {"type": "string"}}},
)


def demo_agent(
    executed: list[tuple[str, dict[str, Any]]], *, frontend: bool = False
) -> Agent[None, Output]:
    """The demo's tools under their names; each records the arguments it ran with."""
    agent = Agent(
        offline_model(),
        output_type=[str, DeferredToolRequests],
        toolsets=[ExternalToolset([PICK_DATE])] if frontend else [],
    )

    @agent.tool_plain(requires_approval=True)
    def sendEmail(to: str, subject: str, body: str) -> dict[str, Any]:
        executed.append(("sendEmail", {"to": to, "subject": subject, "body": body}))
        if to.startswith("broken"):
            return {"error": {"type": "SmtpError", "message": "mailbox full"}}
        return {"sent": True, "to": to, "subject": subject}

    @agent.tool_plain(requires_approval=True)
    def submitExpense(  # a float-typed amount: 1200 comes back as 1200.0
        amount: float, currency: str, description: str
    ) -> dict[str, Any]:
        executed.append(("submitExpense", {"amount": amount, "currency": currency}))
        return {
            "submitted": True,
            "chainId": "expense-1",
            "amount": amount,
            "currency": currency,
            "description": description,
        }

    @agent.tool_plain
    def fileQuarterlyReport() -> dict[str, Any]:
        raise CallDeferred()  # a person fills the form (input_required)

    return agent


async def ask(agent: Agent[None, Output], text: str) -> tuple[Output, list[ModelMessage]]:
    result = await agent.run(text)
    return result.output, result.all_messages()


async def resume(
    agent: Agent[None, Output], history: list[ModelMessage], answers: DeferredToolResults
) -> Output:
    result = await agent.run(message_history=history, deferred_tool_results=answers)
    return result.output


def requests(output: Output) -> DeferredToolRequests:
    assert isinstance(output, DeferredToolRequests), output
    return output


async def test_three_emails_are_one_response_and_their_results_one_reply() -> None:
    executed: list[tuple[str, dict[str, Any]]] = []
    agent = demo_agent(executed)
    output, history = await ask(
        agent, "Send emails to ada@example.com, bob@example.com and cy@example.com saying hi"
    )
    calls = requests(output).approvals
    assert [(c.tool_name, c.args_as_dict()) for c in calls] == [
        ("sendEmail", {"to": to, "subject": "Message from your assistant", "body": "hi"})
        for to in ("ada@example.com", "bob@example.com", "cy@example.com")
    ]
    assert all(CALL_ID.fullmatch(c.tool_call_id) for c in calls)
    assert len({c.tool_call_id for c in calls}) == 3
    assert not [p for p in history[-1].parts if not isinstance(p, ToolCallPart)]  # no text

    edited = {"to": "grace@example.com", "subject": "Edited", "body": "hey"}
    answers = DeferredToolResults(
        approvals={
            calls[0].tool_call_id: ToolApproved(),
            calls[1].tool_call_id: ToolApproved(override_args=edited),
            calls[2].tool_call_id: ToolDenied("you rejected it"),
        }
    )
    assert await resume(agent, history, answers) == (
        "Sent the email to ada@example.com ('Message from your assistant'). "
        "Sent the email to grace@example.com ('Edited'). "
        "I did not carry out the email to cy@example.com: you rejected it."
    )
    # pydantic-ai runs approved calls side by side (sync tools in threads): any order
    assert sorted(args["to"] for _, args in executed) == ["ada@example.com", "grace@example.com"]


@pytest.mark.parametrize(
    "why", ["you rejected it", "it was cancelled", "nobody answered before it expired"]
)
async def test_a_denial_is_told_with_its_reason(why: str) -> None:
    executed: list[tuple[str, dict[str, Any]]] = []
    agent = demo_agent(executed)
    output, history = await ask(agent, "Please reimburse 42.50 usd for team lunch.")
    (call,) = requests(output).approvals
    assert (call.tool_name, call.args_as_dict()) == (
        "submitExpense",
        {"amount": 42.5, "currency": "USD", "description": "team lunch"},
    )
    answers = DeferredToolResults(approvals={call.tool_call_id: ToolDenied(why)})
    assert await resume(agent, history, answers) == (
        f"I did not carry out the expense (42.5 USD): {why}."
    )
    assert executed == []


async def test_an_approved_expense_is_submitted() -> None:
    executed: list[tuple[str, dict[str, Any]]] = []
    agent = demo_agent(executed)
    output, history = await ask(agent, "reimburse 1,200 for the conference")
    (call,) = requests(output).approvals
    assert call.args_as_dict() == {
        "amount": 1200,
        "currency": "EUR",
        "description": "the conference",
    }
    reply = await resume(agent, history, DeferredToolResults(approvals={call.tool_call_id: True}))
    assert reply == (
        "Submitted the expense (1200 EUR for the conference) for approval as expense-1. "
        "I will tell you here when it is decided."
    )
    assert executed == [("submitExpense", {"amount": 1200, "currency": "EUR"})]


async def test_the_quarterly_report_is_filed_from_the_form_answer() -> None:
    agent = demo_agent([])
    output, history = await ask(agent, "File the quarterly report")
    (call,) = requests(output).calls
    assert (call.tool_name, call.args_as_dict()) == ("fileQuarterlyReport", {})
    result = {"filed": True, "quarter": "Q3", "year": 2026, "revenue": 1234.5}
    reply = await resume(agent, history, DeferredToolResults(calls={call.tool_call_id: result}))
    assert reply == "Filed the Q3 2026 quarterly report (revenue 1234.5)."


async def test_a_tool_error_result_is_reported() -> None:
    agent = demo_agent([])
    output, history = await ask(agent, "email broken@example.com")
    (call,) = requests(output).approvals
    reply = await resume(agent, history, DeferredToolResults(approvals={call.tool_call_id: True}))
    assert reply == (
        "I could not carry out the email to broken@example.com (SmtpError: mailbox full). "
        "You can ask me again."
    )


@pytest.mark.parametrize(
    ("answer", "reply"),
    [
        ('{"date": "2026-12-03"}', "You picked 2026-12-03."),
        ({"date": "2027-01-05"}, "You picked 2027-01-05."),
        ('{"cancelled": true}', "You did not pick a date."),
        ("later", "You did not pick a date."),
    ],
)
async def test_a_frontend_date_picker_is_called_when_offered(answer: Any, reply: str) -> None:
    agent = demo_agent([], frontend=True)
    output, history = await ask(agent, "Which date suits you for the review?")
    (call,) = requests(output).calls
    assert (call.tool_name, call.args_as_dict()) == ("pickDate", {"question": PICK_DATE_QUESTION})
    assert (
        await resume(agent, history, DeferredToolResults(calls={call.tool_call_id: answer}))
        == reply
    )


async def test_without_the_date_picker_a_date_gets_help() -> None:
    output, _ = await ask(demo_agent([]), "Which date suits you for the review?")
    assert output == HELP


async def test_a_tool_the_agent_does_not_offer_is_not_called() -> None:
    agent = Agent(offline_model(), output_type=[str, DeferredToolRequests])
    result = await agent.run("Send an email to ada@example.com saying hi")
    assert result.output == HELP


async def test_text_streams_word_by_word() -> None:
    chunks: list[str] = []

    async def collect(_: RunContext[None], events: Any) -> None:
        async for event in events:
            if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                chunks.append(event.part.content)
            elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                chunks.append(event.delta.content_delta)

    result = await demo_agent([]).run("What can you do?", event_stream_handler=collect)
    assert result.output == HELP
    assert chunks[:3] == ["I ", "can ", "send "]
    assert "".join(chunks) == HELP


async def test_streamed_tool_calls_match_the_unstreamed_ones() -> None:
    text = "Send emails to ada@example.com and bob@example.com"
    events: list[AgentStreamEvent] = []

    async def collect(_: RunContext[None], stream: Any) -> None:
        events.extend([event async for event in stream])

    streamed = await demo_agent([]).run(text, event_stream_handler=collect)
    plain = await demo_agent([]).run(text)
    assert events  # the streamed run went through the stream function
    assert [(c.tool_name, c.args_as_dict()) for c in requests(streamed.output).approvals] == [
        (c.tool_name, c.args_as_dict()) for c in requests(plain.output).approvals
    ]


def test_results_are_summed_up_in_the_order_of_the_calls() -> None:
    """Returns listed out of order (and a tool that failed for good) still read as called."""
    calls = [
        ToolCallPart("sendEmail", {"to": "a@x.io"}, tool_call_id="1"),
        ToolCallPart("fileQuarterlyReport", {}, tool_call_id="2"),
    ]
    returns = [
        ToolReturnPart("fileQuarterlyReport", "worker lost", tool_call_id="2", outcome="failed"),
        ToolReturnPart(
            "sendEmail",
            json.dumps({"sent": True, "to": "a@x.io", "subject": "S"}),
            tool_call_id="1",
        ),
    ]
    info = AgentInfo(
        function_tools=[],
        allow_text_output=True,
        output_tools=[],
        model_settings=None,
        model_request_parameters=None,  # type: ignore[arg-type]  # not read when summing up
        instructions=None,
    )
    reply = reply_to([ModelResponse(parts=calls), ModelRequest(parts=returns)], info)
    assert reply == (
        "Sent the email to a@x.io ('S'). "
        "I could not carry out the quarterly report (worker lost). You can ask me again."
    )
