"""Bad requests get a 4xx with a JSON body before any stream starts, and change nothing."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from ag_ui.core import RunAgentInput
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from ag_ui_temporal.agents.registry import all_served
from ag_ui_temporal.gateway.runs import _not_run
from ag_ui_temporal.workflows.contract import ErrorCode, RunRejection
from tests.agui import interrupts, resolve, run, texts, thread_state

GOOD = {"threadId": "t", "runId": "r", "messages": []}


def bodies(thread_id: str) -> list[tuple[str, Any]]:
    base = {**GOOD, "threadId": thread_id}
    return [
        ("not json", b"{bad"),
        ("a list", b"[]"),
        ("a string", b'"hello"'),
        ("no threadId", {"runId": "r", "messages": []}),
        ("no runId", {"threadId": thread_id, "messages": []}),
        ("no messages", {"threadId": thread_id, "runId": "r"}),
        ("empty threadId", {**base, "threadId": ""}),
        ("blank runId", {**base, "runId": "  "}),
        ("messages not a list", {**base, "messages": "hi"}),
        ("message without role", {**base, "messages": [{"id": "m", "content": "hi"}]}),
        ("unknown role", {**base, "messages": [{"id": "m", "role": "boss", "content": "x"}]}),
        ("resume status", {**base, "resume": [{"interruptId": "i", "status": "maybe"}]}),
        ("resume without id", {**base, "resume": [{"status": "cancelled"}]}),
        ("resume not a list", {**base, "resume": {"interruptId": "i"}}),
    ]


async def test_malformed_bodies_are_4xx_json(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    [pending] = interrupts(
        await run(http, thread_id, text="Send an email to ada@example.com saying hi")
    )
    before = await thread_state(client, thread_id)
    for name, body in bodies(thread_id):
        if isinstance(body, bytes):
            response = await http.post(
                "/agents/assistant", content=body, headers={"content-type": "application/json"}
            )
        else:
            response = await http.post("/agents/assistant", json=body)
        assert 400 <= response.status_code < 500, (name, response.status_code, response.text)
        assert response.headers["content-type"] == "application/json", name
        assert "detail" in response.json(), name
        assert "Traceback" not in response.text
    assert await thread_state(client, thread_id) == before
    done = await run(http, thread_id, resume=[resolve(pending, {"approved": True})])
    assert "Sent the email" in texts(done)


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/agents/nobody"), ("GET", "/agents/nobody/capabilities")],
)
async def test_unknown_agent_is_404(http: httpx.AsyncClient, method: str, path: str):
    response = await http.request(method, path, json=GOOD)
    assert response.status_code == 404
    assert "unknown agent" in response.json()["detail"]


async def test_agents_and_capabilities(http: httpx.AsyncClient):
    names = [a["name"] for a in (await http.get("/agents")).json()]
    # the library's inbox first, then what the process registered: the demo's assistant, and
    # whatever other test modules registered in this process
    assert names[0] == "inbox" and "assistant" in names
    # pydantic-ai agents, LangGraph graphs, OpenAI Agents SDK and Google ADK agents
    assert set(names[1:]) <= set(all_served())  # as registered when the app was built
    capabilities = (await http.get("/agents/assistant/capabilities")).json()
    assert capabilities == {
        "humanInTheLoop": {
            "supported": True,
            "approvals": True,
            "interrupts": True,
            "approveWithEdits": True,
        }
    }


async def test_health(http: httpx.AsyncClient):
    assert (await http.get("/healthz")).json()["status"] == "ok"
    assert (await http.get("/readyz")).json() == {"status": "ready"}


def test_an_update_the_server_gave_up_is_unavailable_not_a_failure():
    """Only a contract rule's refusal is final; the server aborting an update (a restart)
    is `UNAVAILABLE`, so the client re-sends the same POST (the fault harness met it)."""
    body = RunAgentInput(thread_id="t", run_id="r", state=None, messages=[], tools=[],
                         context=[], forwarded_props=None)  # fmt: skip
    aborted = WorkflowUpdateFailedError(ApplicationError("workflow update was aborted"))
    [_, error] = [item.event for item in _not_run(body, aborted, events_sent=False)]
    assert error["code"] == "UNAVAILABLE"
    assert _not_run(body, aborted, events_sent=True) == []  # the client re-attaches
    rule = ApplicationError(
        "no", RunRejection(code=ErrorCode.FORBIDDEN, message="no").model_dump(), type="FORBIDDEN"
    )
    [_, error] = [item.event for item in _not_run(body, WorkflowUpdateFailedError(rule), True)]
    assert error["code"] == "FORBIDDEN"
