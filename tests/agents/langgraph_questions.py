"""A LangGraph graph of the tests' own (`tests/agents/test_langgraph.py`), registered as
`questions`: it asks with `interrupt()` in workflow-side nodes and says what it heard.

- "form": one `input_required` question whose schema is `interrupt(...,
  response_schema=...)`'s; it says hello to the name it gets.
- "two": two questions in one super-step (`Send`), one batch; it says both answers.
- "soon": a `confirmation` that expires after a second; it says what it heard.
- anything else: it counts the user's messages it has seen (its checkpoint's memory).

`questions-end` is the same graph with `on_expiry="end"`.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Send, interrupt

from ag_ui_temporal.agents.graphs import InterruptDefaults, not_answered, register_graph

NAME = {
    "type": "object",
    "properties": {"name": {"type": "string", "minLength": 1}},
    "required": ["name"],
    "additionalProperties": False,
}


def _said(text: str) -> dict[str, Any]:
    return {"messages": [AIMessage(content=text)]}


def route(state: MessagesState) -> Any:
    text = str(state["messages"][-1].text)
    if text == "two":
        return [Send("check", {"which": which}) for which in ("left", "right")]
    return {"form": "form", "soon": "soon"}.get(text, "count")


def form(state: MessagesState) -> dict[str, Any]:
    answer = interrupt("What is your name?", response_schema=NAME)
    return _said(f"Hello {answer['name']}." if not not_answered(answer) else "No name.")


def check(task: Any) -> dict[str, Any]:
    answer = interrupt({"message": f"Check {task['which']}?", "responseSchema": {"type": "string"}})
    return _said(f"{task['which']}: {answer}")


def soon(state: MessagesState) -> dict[str, Any]:
    answer = interrupt({"reason": "confirmation", "message": "Quick?", "expiresIn": 1})
    return _said(f"I heard: {not_answered(answer) or answer}.")


def count(state: MessagesState) -> dict[str, Any]:
    seen = sum(isinstance(m, HumanMessage) for m in state["messages"])
    return _said(f"You said {seen} things.")


def build() -> StateGraph[Any, Any, Any, Any]:
    graph: StateGraph[Any, Any, Any, Any] = StateGraph(MessagesState)
    nodes: dict[str, Any] = {"form": form, "check": check, "soon": soon, "count": count}
    for name, node in nodes.items():
        graph.add_node(name, node, metadata={"execute_in": "workflow"})
        graph.add_edge(name, END)
    graph.add_conditional_edges(START, route, ["form", "check", "soon", "count"])
    return graph


register_graph(
    build(),
    name="questions",
    description="The tests' questions.",
    defaults=InterruptDefaults(message="A question."),
)
register_graph(build(), name="questions-end", on_expiry="end")
"""The same questions; an expiry ends the graph's turn instead of resuming it."""
