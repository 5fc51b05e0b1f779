"""LangGraph graphs served in threads (docs/agents.md#langgraph-graphs): the door of the
`langgraph` extra, `pip install 'ag-ui-temporal[langgraph]'` (the server's, plus LangGraph,
LangChain core and Temporal's `temporalio-langgraph`). Every name of `__all__` imports on an
install with that extra; without it, importing this module says what to install."""

from __future__ import annotations

try:
    from ag_ui_temporal.agents.graphs import (
        InterruptDefaults,
        ToolDecision,
        ask_tool_call,
        not_answered,
        register_graph,
    )
except ModuleNotFoundError as err:
    if (err.name or "").startswith("ag_ui_temporal"):
        raise
    wanted = "pip install 'ag-ui-temporal[langgraph]'"
    raise ImportError(f"ag_ui_temporal.langgraph needs the langgraph extra: {wanted}") from err

__all__ = ["InterruptDefaults", "ToolDecision", "ask_tool_call", "not_answered", "register_graph"]
