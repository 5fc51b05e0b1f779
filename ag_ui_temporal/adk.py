"""Google ADK agents served in threads (docs/agents.md#google-adk-agents): the door of the
`google-adk` extra, `pip install 'ag-ui-temporal[google-adk]'` (the server's, plus ADK and
Temporal's `temporalio-google-adk`). Every name of `__all__` imports on an install with that
extra; without it, importing this module says what to install."""

from __future__ import annotations

try:
    from ag_ui_temporal.agents.adk_agents import ThreadModel, register_adk_agent
except ModuleNotFoundError as err:
    if (err.name or "").startswith("ag_ui_temporal"):
        raise
    wanted = "pip install 'ag-ui-temporal[google-adk]'"
    raise ImportError(f"ag_ui_temporal.adk needs the google-adk extra: {wanted}") from err

__all__ = ["ThreadModel", "register_adk_agent"]
