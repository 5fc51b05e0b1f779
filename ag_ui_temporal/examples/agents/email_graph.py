"""A LangGraph graph of your own, served in threads at `POST /agents/langgraph`.

List this module in `AGENT_MODULES` (`make run` does); importing it registers the graph.
docs/agents.md walks through it. A model node calls a chat model with one tool,
`sendEmail`; each call the model makes goes to a node of its own (`Send`), which asks a
person first (`ask_tool_call`: a `tool_call` interrupt that expires in two days) and sends
the email only once they approve, with their edits. Several calls in one response ask in
one batch. The email is sent once per tool call id, whatever Temporal retries.

The model is a small offline chat model that reads this graph's own sentences
(`examples.agents.email_graph_model`); any LangChain chat model with `bind_tools` takes its
place.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Send

from ag_ui_temporal.agents.graphs import ask_tool_call, register_graph
from ag_ui_temporal.demo.tools import SEND_EMAIL
from ag_ui_temporal.examples.agents.email_graph_model import EmailChatModel

NAME = "langgraph"
APPROVAL_EXPIRES_IN = "2d"


@dataclass
class Email:
    id: str
    to: str
    subject: str
    body: str


SENT: dict[str, Email] = {}
"""The emails sent, by tool call id: a stand-in for a mail service that takes an idempotency
key (a retried attempt of the node sends nothing more)."""


@tool(SEND_EMAIL.name, args_schema=SEND_EMAIL.parameters, description=SEND_EMAIL.description)
def send_email(to: str, subject: str, body: str) -> str:
    """The assistant's `sendEmail` (its JSON Schema): a front end that registered the published
    TanStack definition (`examples/tools`) gets this graph's approvals as `tool-approval` items
    (TanStack binds only a tool whose schema hashes alike)."""
    raise NotImplementedError  # sent by `send_email_node`, once per call id


MODEL = EmailChatModel(word_delay=0.05).bind_tools([send_email])


async def call_model(state: MessagesState) -> dict[str, Any]:
    return {"messages": [await MODEL.ainvoke(state["messages"])]}


def each_call(state: MessagesState) -> list[Send] | str:
    """Each tool call of the model's last message to a node of its own: in one super-step,
    so that their approvals are asked together."""
    calls = getattr(state["messages"][-1], "tool_calls", None) or []
    return [Send("sendEmail", call) for call in calls] or END


def send_email_node(call: Any) -> dict[str, Any]:
    """One tool call (`each_call` sends it): ask first (the node runs again from here with the
    answer), then send once per call."""
    decision = ask_tool_call(
        call, message="Send an email to {to}?", tool=send_email, expires_in=APPROVAL_EXPIRES_IN
    )
    if not decision.approved:
        result = ToolMessage(decision.why_not, tool_call_id=call["id"], status="error")
        return {"messages": [result]}
    email = SENT.setdefault(call["id"], Email(id=f"em-{len(SENT) + 1}", **decision.args))
    return {"messages": [ToolMessage(json.dumps(asdict(email)), tool_call_id=call["id"])]}


def build_graph() -> StateGraph[Any, Any, Any, Any]:
    graph: StateGraph[Any, Any, Any, Any] = StateGraph(MessagesState)
    graph.add_node("model", call_model, metadata={"execute_in": "activity"})
    # a `Send` target: its input is the call, not the state (LangGraph's types assume the state)
    graph.add_node("sendEmail", send_email_node, metadata={"execute_in": "activity"})  # type: ignore[arg-type]
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", each_call, ["sendEmail", END])
    graph.add_edge("sendEmail", "model")
    return graph


register_graph(
    build_graph(),
    name=NAME,
    description="LangGraph example: sends emails, each one approved by a person first.",
)
