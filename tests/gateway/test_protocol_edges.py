"""Protocol edges of issue 30 through the real gateway and a real Temporal server: resume
`metadata` is an object or absent, never null (AG-UI's route and the decision API refuse a
null and change nothing), and a run that brings no input leaves the thread's `state` as it
was, while one that brings input carries the client's state in.
"""

from __future__ import annotations

from typing import Any

import httpx
from temporalio.client import Client

from tests.agui import (
    STREAMS,
    cancel,
    finished,
    interrupts,
    parse_sse,
    resolve,
    run,
    run_body,
    thread_state,
    user,
)
from tests.gateway.test_limits import assert_json_4xx

EMAIL = "Send an email to ada@example.com saying hi"
APPROVE = {"approved": True}


async def hydrate(http: httpx.AsyncClient, thread_id: str) -> dict[str, Any]:
    response = await http.get("/agents/assistant", params={"threadId": thread_id})
    assert response.status_code == 200, response.text
    shown: dict[str, Any] = response.json()
    return shown


async def post(http: httpx.AsyncClient, body: dict[str, Any]) -> list[dict[str, Any]]:
    """One run with the whole body as given (`tests.agui.run` sends no `state`)."""
    response = await http.post("/agents/assistant", json=body)
    assert response.status_code == 200, response.text
    events = parse_sse(response.text)
    STREAMS.append(events)  # validated by @ag-ui/core at the end of the session
    return events


def snapshot(events: list[dict[str, Any]]) -> Any:
    """The run's `STATE_SNAPSHOT`: the thread's state as the run ended."""
    [state] = [e["snapshot"] for e in events if e["type"] == "STATE_SNAPSHOT"]
    return state


# -- 5: resume metadata is an object or absent ---------------------------------------------


async def test_resume_metadata_null_is_refused_and_changes_nothing(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    [pending] = interrupts(await run(http, thread_id, text=EMAIL))
    before, shown = await thread_state(client, thread_id), await hydrate(http, thread_id)
    for entry in (resolve(pending, APPROVE), cancel(pending)):
        body = run_body(thread_id, resume=[{**entry, "metadata": None}])
        response = await http.post("/agents/assistant", json=body)
        assert_json_4xx(response, 422, "resume[0].metadata", "null", "INVALID_RESUME")
    assert await thread_state(client, thread_id) == before
    assert await hydrate(http, thread_id) == shown
    # an object is kept with the answer; left out, the entry has none
    done = await run(http, thread_id, resume=[{**resolve(pending, APPROVE), "metadata": {}}])
    assert finished(done)["outcome"] == {"type": "success"}
    [record] = (await thread_state(client, thread_id)).interrupts
    assert record.resolution is not None and record.resolution.metadata == {}


async def test_decision_api_refuses_metadata_null_and_changes_nothing(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    [pending] = interrupts(await run(http, thread_id, text=EMAIL))
    before, shown = await thread_state(client, thread_id), await hydrate(http, thread_id)
    url = f"/interrupts/{pending['id']}"
    for answer in ({"status": "resolved", "payload": APPROVE}, {"status": "cancelled"}):
        response = await http.post(url, json={"threadId": thread_id, **answer, "metadata": None})
        assert response.status_code == 422, response.text
        assert response.headers["content-type"] == "application/json"
        refusal = response.json()
        assert refusal["code"] == "INVALID_RESUME" and "null" in refusal["message"], refusal
    assert await thread_state(client, thread_id) == before
    assert await hydrate(http, thread_id) == shown
    # without the null the same decision is taken, metadata kept
    decision = {"threadId": thread_id, "status": "resolved", "payload": APPROVE}
    response = await http.post(url, json={**decision, "metadata": {"ticket": "T-1"}})
    assert response.status_code == 200, response.text
    [record] = (await thread_state(client, thread_id)).interrupts
    assert record.resolution is not None and record.resolution.metadata == {"ticket": "T-1"}


# -- 6: a run that brings no input keeps the thread's state ------------------------------------


async def test_a_run_without_input_keeps_the_state_while_interrupts_await(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    asked = await post(http, run_body(thread_id, EMAIL, state={"draft": 1}))
    [pending] = interrupts(asked)
    assert snapshot(asked) == {"draft": 1}
    # a client re-attaching with what it had (`{}`, as TanStack's and HttpAgent's send):
    # the awaiting interrupt again, the state as the thread holds it
    for stale in ({}, {"draft": 0}):
        again = await post(http, run_body(thread_id, state=stale))
        assert [i["id"] for i in interrupts(again)] == [pending["id"]]
        assert snapshot(again) == {"draft": 1}
        assert (await thread_state(client, thread_id)).state == {"draft": 1}
    # the run that answers brings input: its state is taken
    done = await post(
        http, run_body(thread_id, resume=[resolve(pending, APPROVE)], state={"draft": 2})
    )
    assert finished(done)["outcome"] == {"type": "success"}
    assert snapshot(done) == {"draft": 2}
    assert (await thread_state(client, thread_id)).state == {"draft": 2}


async def test_a_run_without_input_keeps_the_state_of_a_free_thread(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    said = await post(http, run_body(thread_id, "hello", state={"step": "one"}))
    assert snapshot(said) == {"step": "one"}
    # the client re-sends the transcript it has (the reply is the thread's anchor): no input
    transcript = [*said_messages(said)]
    idle = await post(http, {**run_body(thread_id, state={}), "messages": transcript})
    assert finished(idle)["outcome"] == {"type": "success"}
    assert snapshot(idle) == {"step": "one"}
    assert (await thread_state(client, thread_id)).state == {"step": "one"}
    # a new message brings input: the state it carries replaces the thread's
    body = run_body(thread_id, state={"step": "two"})
    moved = await post(http, {**body, "messages": [*transcript, user("and again")]})
    assert finished(moved)["outcome"] == {"type": "success"}
    assert snapshot(moved) == {"step": "two"}
    assert (await thread_state(client, thread_id)).state == {"step": "two"}


def said_messages(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The transcript as the run's `MESSAGES_SNAPSHOT` gave it to the client."""
    [messages] = [e["messages"] for e in events if e["type"] == "MESSAGES_SNAPSHOT"]
    return list(messages)
