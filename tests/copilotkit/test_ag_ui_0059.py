"""What CopilotKit's AG-UI (`@ag-ui/core` and `@ag-ui/client` 0.0.59, which
`@copilotkit/react-core` 1.74.0 and `@copilotkit/runtime` 1.75.0 pin) refuses that AG-UI 1.0
allows: the gateway must not send it. Every stream a test session receives is checked so at its
end (tests/conftest.py); here the check itself is shown to name the event and the field."""

from __future__ import annotations

from typing import Any

from tests.copilotkit.driver import requires_copilotkit, run_script

pytestmark = requires_copilotkit

STARTED = {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.0"}


def finished(outcome: dict[str, Any]) -> dict[str, Any]:
    return {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": outcome}


async def test_the_check_names_what_0059_refuses() -> None:
    streams = [
        [STARTED, finished({"type": "success"})],
        [STARTED, finished({"type": "success", "pendingToolCallIds": ["call-1"]})],  # 1.0 only
        [STARTED, finished({"type": "cancelled"})],  # 1.0 only
        [STARTED, {"type": "RUN_ERROR", "message": "no", "code": None}],  # nowhere
        [STARTED, finished({"type": "success"}), finished({"type": "success"})],  # order
    ]
    report = await run_script("validate_events.mjs", {"streams": streams})
    problems = {(p["stream"], p["index"], p["type"], p["source"]) for p in report["problems"]}
    assert problems == {
        (1, 1, "RUN_FINISHED", "schema"),
        (2, 1, "RUN_FINISHED", "schema"),
        (3, 1, "RUN_ERROR", "schema"),
        (4, 2, "RUN_FINISHED", "client"),
    }
    [pending] = [p["problem"] for p in report["problems"] if p["stream"] == 1]
    assert "/outcome" in pending and "pendingToolCallIds" in pending
    [code] = [p["problem"] for p in report["problems"] if p["stream"] == 3]
    assert code.startswith("/code:")
