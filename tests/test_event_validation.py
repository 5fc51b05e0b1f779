"""The end-of-session AG-UI validation (`tests/conftest.py`): every stream a test received is
checked by `@ag-ui/core`, and a suite that could not check them fails instead of passing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import node_clients
from tests.node_clients import requires_node, validate_streams

STARTED = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
FINISHED = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}


@pytest.mark.parametrize("missing", ["node", "node_modules"])
async def test_streams_without_node_to_check_them_fail_the_session(
    missing: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    if missing == "node":
        monkeypatch.setenv("PATH", str(tmp_path))
    else:
        monkeypatch.setattr(node_clients, "NODE_DIR", tmp_path)
    with pytest.raises(pytest.fail.Exception, match="1 AG-UI event streams left unvalidated"):
        await validate_streams([[STARTED, FINISHED]])


async def test_no_streams_need_no_node(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setattr(node_clients, "NODE_DIR", tmp_path)
    await validate_streams([])


@requires_node
async def test_a_valid_stream_passes_and_an_invalid_one_fails():
    await validate_streams([[STARTED, FINISHED]])
    with pytest.raises(AssertionError, match="in 2 streams"):
        await validate_streams([[STARTED, FINISHED], [FINISHED, STARTED]])


@requires_node
async def test_the_check_names_what_ag_ui_0059_refuses():
    """What CopilotKit's AG-UI (`@ag-ui/core` and `@ag-ui/client` 0.0.59, which
    `@copilotkit/react-core` 1.74.0 and `@copilotkit/runtime` 1.75.0 pin) refuses that AG-UI
    1.0 allows: the gateway must not send it, and the session's check names the event."""
    started = {**STARTED, "protocolVersion": "1.0"}

    def finished(outcome: dict[str, object]) -> dict[str, object]:
        return {**FINISHED, "outcome": outcome}

    streams = [
        [started, finished({"type": "success"})],
        [started, finished({"type": "success", "pendingToolCallIds": ["call-1"]})],  # 1.0 only
        [started, finished({"type": "cancelled"})],  # 1.0 only
        [started, {"type": "RUN_ERROR", "message": "no", "code": None}],  # nowhere
    ]
    report = await node_clients.run_node("validate_events.mjs", {"streams": streams})
    problems = {(p["stream"], p["index"]) for p in report["problems"] if p["source"] == "0.0.59"}
    assert problems == {(1, 1), (2, 1), (3, 1)}
    [pending] = [p["problem"] for p in report["problems"] if p["stream"] == 1]
    assert pending.startswith("RUN_FINISHED: /outcome") and "pendingToolCallIds" in pending
