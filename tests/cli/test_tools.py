"""`ag-ui-temporal tools AGENT`: the TanStack AI definitions of an agent's approval tools,
the file `GET /agents/{agent}/tools.ts` serves (tests/gateway/test_tools_ts.py proves them
against the real `@tanstack/ai`); exit 2 naming the agents for an unknown one."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from ag_ui_temporal.cli import main
from ag_ui_temporal.gateway.approval_tools import typescript_module
from ag_ui_temporal.settings import get_settings

EXAMPLE = "ag_ui_temporal.examples.agents.email_graph"


@pytest.fixture
def tools(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """`main(["tools", ...])` in this process, serving the LangGraph example too."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level  # the command sets its own up
    monkeypatch.setenv("AGENT_MODULES", f'["{EXAMPLE}"]')
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()
    root.handlers[:] = handlers
    root.setLevel(level)


def exit_code(*argv: str) -> int:
    try:
        main(["tools", *argv])
    except SystemExit as done:
        return int(done.code or 0)
    raise AssertionError("tools always exits with its code")


@pytest.mark.usefixtures("tools")
def test_writes_the_file_the_gateway_serves(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = tmp_path / "assistant.tools.ts"
    assert exit_code("assistant", "--output", str(path)) == 0
    assert path.read_text() == typescript_module("assistant")
    assert "export const sendEmail = toolDefinition(" in path.read_text()
    assert capsys.readouterr().err == f"wrote {path}\n"

    assert exit_code("langgraph") == 0
    assert capsys.readouterr().out == typescript_module("langgraph")


@pytest.mark.usefixtures("tools")
def test_an_unknown_agent_exits_2_naming_the_agents(capsys: pytest.CaptureFixture[str]):
    assert exit_code("nobody") == 2
    err = capsys.readouterr().err
    assert err.startswith("unknown agent 'nobody'; the agents: inbox, ")
    assert {"assistant", "langgraph"} <= set(err.strip().split(": ")[-1].split(", "))
