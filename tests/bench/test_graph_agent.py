"""The LangGraph comparison's peer graph (bench/graph_agent.py) is the example's: the same nodes
and edges, and its `sendEmail` node, which has no workflow to start the activity from, asks
the same and records each approved email once per call id in an outbox, as ours does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import StateGraph
from langgraph.types import Command

from ag_ui_temporal.examples.agents import email_graph

ASK = "Send an email to ada@example.com saying hi"


def shape(graph: StateGraph[Any, Any, Any, Any]) -> tuple[Any, ...]:
    branches = {
        node: {name: spec.ends for name, spec in specs.items()}
        for node, specs in graph.branches.items()
    }
    return set(graph.nodes), graph.edges, branches


async def test_the_peers_graph_is_the_examples_and_records_each_email_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # importing the bench's module gives the example its instant model: the example's own
    # comes back after this test (other tests time its words)
    monkeypatch.setattr(email_graph, "MODEL", email_graph.MODEL)
    from bench import graph_agent

    outbox = await graph_agent.peer_outbox(tmp_path / "peer.store.sqlite3")
    peer = graph_agent.peer_graph(outbox)
    assert shape(peer) == shape(email_graph.build_graph())

    app = peer.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "peer"}}
    [asked] = (await app.ainvoke({"messages": [HumanMessage(ASK)]}, config))["__interrupt__"]
    assert (asked.value["reason"], asked.value["message"]) == (
        "tool_call",
        "Send an email to ada@example.com?",
    )
    assert await outbox.effects() == []
    done = await app.ainvoke(Command(resume={"approved": True}), config)
    assert done["messages"][-1].text == "Sent the email to ada@example.com."
    args = {"to": "ada@example.com", "subject": "Hi", "body": "hi"}
    key = asked.value["toolCallId"]
    assert await outbox.effects() == [{"key": key, "tool": "sendEmail", "args": args}]
