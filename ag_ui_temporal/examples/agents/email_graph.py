"""A LangGraph graph of your own, served in threads at `POST /agents/langgraph`.

List this module in `AGENT_MODULES` (`make run` does); importing it registers the graph.
docs/agents.md walks through it. A model node calls a chat model with one tool,
`sendEmail`; each call the model makes goes to a node of its own (`Send`), which runs in the
workflow: it asks a person first (`ask_tool_call`: a `tool_call` interrupt that expires in
two days) and, once they approve, sends the email with their edits through the `sendEmail`
activity (the demo's, `demo.activities`, registered with the graph: `register_activities`),
keyed by the tool call's id: the activity records the email in the store's outbox, so it is
sent once per call, whatever Temporal retries and on whichever worker. Several calls in one
response ask in one batch.

The model is a small offline chat model that reads this graph's own sentences
(`examples.agents.email_graph_model`); any LangChain chat model with `bind_tools` takes its
place.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Send
from temporalio import workflow
from temporalio.common import RetryPolicy

from ag_ui_temporal.agents import register_activities
from ag_ui_temporal.agents.graphs import ask_tool_call, register_graph
from ag_ui_temporal.demo.activities import demo_tools
from ag_ui_temporal.demo.tools import SEND_EMAIL
from ag_ui_temporal.examples.agents.email_graph_model import EmailChatModel
from ag_ui_temporal.workflows.thread.tool_calls import ToolCallInput, ToolCallOutput

NAME = "langgraph"
APPROVAL_EXPIRES_IN = "2d"
SEND_TIMEOUT = timedelta(seconds=30)
"""One attempt of the `sendEmail` activity (as the assistant's tools get)."""
SEND_ATTEMPTS = 5


@tool(SEND_EMAIL.name, args_schema=SEND_EMAIL.parameters, description=SEND_EMAIL.description)
def send_email(to: str, subject: str, body: str) -> str:
    """The assistant's `sendEmail` (its JSON Schema): a front end that registered the published
    TanStack definition (`examples/tools`) gets this graph's approvals as `tool-approval` items
    (TanStack binds only a tool whose schema hashes alike)."""
    raise NotImplementedError  # sent by `send_email_node`, through the `sendEmail` activity


MODEL = EmailChatModel(word_delay=0.05).bind_tools([send_email])


async def call_model(state: MessagesState) -> dict[str, Any]:
    return {"messages": [await MODEL.ainvoke(state["messages"])]}


def each_call(state: MessagesState) -> list[Send] | str:
    """Each tool call of the model's last message to a node of its own: in one super-step,
    so that their approvals are asked together."""
    calls = getattr(state["messages"][-1], "tool_calls", None) or []
    return [Send("sendEmail", call) for call in calls] or END


async def send_email_node(call: Any) -> dict[str, Any]:
    """One tool call (`each_call` sends it), in the workflow: ask first, then send.

    LangGraph runs the node again from its start once the person answers (`ask_tool_call`
    then returns their decision), so nothing before the ask may act. The send is an activity
    registered with the graph (`sendEmail`: `demo.activities.ToolActivities`), keyed by the
    call's id: Temporal runs it once per decision and retries it, possibly on another worker,
    and the activity records the email in the store's outbox under the key, so a retry sends
    nothing more. A replayed thread reads the activity's result from its history."""
    decision = ask_tool_call(
        call, message="Send an email to {to}?", tool=send_email, expires_in=APPROVAL_EXPIRES_IN
    )
    if not decision.approved:
        result = ToolMessage(decision.why_not, tool_call_id=call["id"], status="error")
        return {"messages": [result]}
    sent = await workflow.execute_activity(
        SEND_EMAIL.name,
        ToolCallInput(key=call["id"], tool=SEND_EMAIL.name, args=decision.args),
        result_type=ToolCallOutput,
        start_to_close_timeout=SEND_TIMEOUT,
        retry_policy=RetryPolicy(maximum_attempts=SEND_ATTEMPTS),
    )
    return {"messages": [ToolMessage(json.dumps(sent.result), tool_call_id=call["id"])]}


def build_graph() -> StateGraph[Any, Any, Any, Any]:
    graph: StateGraph[Any, Any, Any, Any] = StateGraph(MessagesState)
    graph.add_node("model", call_model, metadata={"execute_in": "activity"})
    # deterministic code (it asks, then awaits an activity); a `Send` target: its input is the
    # call, not the state (LangGraph's types assume the state)
    graph.add_node("sendEmail", send_email_node, metadata={"execute_in": "workflow"})  # type: ignore[arg-type]
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", each_call, ["sendEmail", END])
    graph.add_edge("sendEmail", "model")
    return graph


register_graph(
    build_graph(),
    name=NAME,
    description="LangGraph example: sends emails, each one approved by a person first.",
    approval_tools=[send_email],  # what `GET /agents/langgraph/tools.ts` writes definitions of
)
# the demo's tools, whose `sendEmail` the graph sends through: the same registration as the
# demo's, so a worker serving both runs them once
register_activities(demo_tools)
