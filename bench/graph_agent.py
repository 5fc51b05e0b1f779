"""The LangGraph-on-LangGraph comparison's graph (`bench/graphs.py`): the example of `make run`
(`examples.agents.email_graph`: a model node, then a `sendEmail` node that asks first), its
offline model answering at once instead of at a reader's pace (`word_delay=0`), as the
bench's other agents do (`OFFLINE_MODEL_WORD_DELAY=0`).

Imported by ours (the bench names it in `AGENT_MODULES` for the worker and the gateway:
the example registers itself, served at `/agents/langgraph`) and by the peer
(`bench.peer ... email`: `graph()` compiled with `ag-ui-langgraph`'s SQLite checkpointer).
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import StateGraph

from ag_ui_temporal.examples.agents import email_graph
from ag_ui_temporal.examples.agents.email_graph_model import EmailChatModel

NAME = email_graph.NAME

# the nodes read the module's model when they run: both sides run this one
email_graph.MODEL = EmailChatModel().bind_tools([email_graph.send_email])


def graph() -> StateGraph[Any, Any, Any, Any]:
    """The example's graph, built anew (the one the example registered is wrapped in place by
    `temporalio-langgraph`'s plugin: its nodes run as activities)."""
    return email_graph.build_graph()
