"""OpenAI Agents SDK agents served in threads (docs/agents.md#openai-agents-sdk-agents): the
door of the `openai-agents` extra, `pip install 'ag-ui-temporal[openai-agents]'` (the server's,
plus the SDK and Temporal's `temporalio-openai-agents`). Every name of `__all__` imports on an
install with that extra; without it, importing this module says what to install."""

from __future__ import annotations

try:
    from ag_ui_temporal.agents.openai_agents import register_openai_agent
except ModuleNotFoundError as err:
    if (err.name or "").startswith("ag_ui_temporal"):
        raise
    wanted = "pip install 'ag-ui-temporal[openai-agents]'"
    raise ImportError(
        f"ag_ui_temporal.openai_agents needs the openai-agents extra: {wanted}"
    ) from err

__all__ = ["register_openai_agent"]
