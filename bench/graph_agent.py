"""The LangGraph-on-LangGraph comparison's graph (`bench/graphs.py`): the example of `make run`
(`examples.agents.email_graph`: a model node, then a `sendEmail` node that asks first and
sends once approved), its offline model answering at once instead of at a reader's pace
(`word_delay=0`), as the bench's other agents do (`OFFLINE_MODEL_WORD_DELAY=0`).

Imported by ours (the bench names it in `AGENT_MODULES` for the worker and the gateway:
the example registers itself, served at `/agents/langgraph`) and by the peer
(`bench.peer ... email`: `peer_graph()` compiled with `ag-ui-langgraph`'s SQLite checkpointer).

One difference, where the email is sent: the example's `sendEmail` node runs in the thread
workflow and sends through the worker's `sendEmail` activity, which records it in the
store's outbox (SQLite in the bench) under the call's id. The peer has no workflow to start an
activity from: its `sendEmail` node asks the same and runs the same activity code in its
process (`ToolActivities.send_email`), on an outbox of its own in a SQLite file. Each side
writes each approved email once per call id in a SQLite store, nothing else differs
(`tests/bench/test_graph_agent.py`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from ag_ui_temporal.agents.graphs import ask_tool_call
from ag_ui_temporal.demo.activities import ToolActivities
from ag_ui_temporal.demo.tools import SEND_EMAIL
from ag_ui_temporal.examples.agents import email_graph
from ag_ui_temporal.examples.agents.email_graph_model import EmailChatModel
from ag_ui_temporal.settings import sqlite_url
from ag_ui_temporal.store import Outbox, open_engine
from ag_ui_temporal.store.migrate import upgrade
from ag_ui_temporal.workflows.thread.tool_calls import ToolCallInput

NAME = email_graph.NAME

# the nodes read the module's model when they run: both sides run this one
email_graph.MODEL = EmailChatModel().bind_tools([email_graph.send_email])


def peer_graph(outbox: Outbox) -> StateGraph[Any, Any, Any, Any]:
    """The example's graph for the peer: its model node and edges, and a `sendEmail` node that
    asks as the example's does, then sends in the process, once per call id in `outbox`."""
    tools = ToolActivities(outbox)

    async def send_email_node(call: Any) -> dict[str, Any]:
        decision = ask_tool_call(
            call,
            message="Send an email to {to}?",
            tool=email_graph.send_email,
            expires_in=email_graph.APPROVAL_EXPIRES_IN,
        )
        if not decision.approved:
            result = ToolMessage(decision.why_not, tool_call_id=call["id"], status="error")
            return {"messages": [result]}
        email = ToolCallInput(key=call["id"], tool=SEND_EMAIL.name, args=decision.args)
        sent = await tools.send_email(email)  # the activity's code, in the peer's process
        return {"messages": [ToolMessage(json.dumps(sent.result), tool_call_id=call["id"])]}

    graph: StateGraph[Any, Any, Any, Any] = StateGraph(MessagesState)
    graph.add_node("model", email_graph.call_model)
    graph.add_node("sendEmail", send_email_node)  # type: ignore[arg-type]
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", email_graph.each_call, ["sendEmail", END])
    graph.add_edge("sendEmail", "model")
    return graph


async def peer_outbox(path: Path) -> Outbox:
    """The peer's outbox: a migrated store in the SQLite file `path` (ours' is the stack's)."""
    url = sqlite_url(path)
    await upgrade(url)
    return Outbox(open_engine(url))
