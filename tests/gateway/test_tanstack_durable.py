"""TanStack's durable stream with its real `ChatClient`: reconnect, reload (hydrate), join.

The gateway runs on the gated worker (`sendEmail` waits until the test opens
`stack.gate`), behind a small proxy (`tests/gateway/proxy.py`) that sees every
request the client makes and can cut a response, so "the connection dropped
while the tool was running" and "the page reloaded while the run went on" are
states the test holds, not races.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from ag_ui_temporal.gateway import streaming as gateway_streaming
from tests.agui import STREAMS, parse_frame
from tests.gateway.conftest import Stack
from tests.gateway.proxy import Cut, Proxy, Request
from tests.node_clients import requires_node, run_node

pytestmark = requires_node

EMAIL = "Send an email to ada@example.com saying hi"
EMAILS = "Send emails to ada@example.com, bob@example.com and cy@example.com"


@pytest.fixture
async def proxy(stack: Stack, gated: httpx.AsyncClient) -> AsyncIterator[Proxy]:
    """A proxy in front of the gated gateway (the gate is closed when a test starts)."""
    async with Proxy(stack.url) as proxy:
        yield proxy


async def chat(
    proxy: Proxy, thread_id: str, *steps: dict[str, Any], record: bool = True, **job: Any
) -> list[dict[str, Any]]:
    """Run the real `ChatClient` through the proxy; its snapshots, one per step.

    With `record` (the default) the runs it received are kept for the end-of-session
    validation; a test whose run goes on in a second client records both together.
    """
    result = await run_node(
        "tanstack_chat.mjs",
        {
            "url": f"{proxy.url}/agents/assistant",
            "threadId": thread_id,
            "steps": list(steps),
            **job,
        },
    )
    snapshots = result["snapshots"]
    if record:
        STREAMS.extend(delivered_streams(snapshots))
    for snapshot in snapshots:
        assert snapshot["stepError"] is None, snapshot["stepError"]
    return snapshots


def delivered_streams(snapshots: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Each run's events as the client got them: its responses (the POST, its reconnects,
    joins) put together, every event id taken once, as the client de-dupes them."""
    streams: dict[str, list[dict[str, Any]]] = {}
    seen: dict[str, set[str]] = {}
    for snapshot in snapshots:
        for request in snapshot["requests"]:
            if not request.get("events"):
                continue
            key = run_of(request)
            stream, ids = streams.setdefault(key, []), seen.setdefault(key, set())
            for event, event_id in zip(request["events"], request["ids"], strict=True):
                if event_id is None or event_id not in ids:
                    stream.append(event)
                    ids.add(event_id)
    return list(streams.values())


def run_of(request: dict[str, Any]) -> str:
    """The run a harness-recorded request is about: the POST body's, or the join's query."""
    if request["method"] == "POST":
        return request["body"]["runId"]
    return httpx.URL(request["url"]).params["runId"]


def said(snapshot: dict[str, Any]) -> list[str]:
    """Every text the assistant said, as the client shows it."""
    return [
        part["content"]
        for message in snapshot["messages"]
        if message["role"] == "assistant"
        for part in message["parts"]
        if part["type"] == "text"
    ]


def parts(snapshot: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [part for m in snapshot["messages"] for part in m["parts"] if part["type"] == kind]


def approve(index: int) -> dict[str, Any]:
    return {"index": index, "payload": {"approved": True}}


def resumes(request: Request) -> bool:
    return request.method == "POST" and bool(request.json().get("resume"))


@contextlib.asynccontextmanager
async def gate_opens_on(proxy: Proxy, stack: Stack, predicate: Callable[[Request], bool]):
    """Open the gate (let `sendEmail` finish) once the proxy has seen a matching request."""

    async def open_gate() -> None:
        await proxy.wait_for(predicate)
        stack.gate.set()

    task = asyncio.create_task(open_gate())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def whole_run(http: httpx.AsyncClient, thread_id: str, run_id: str) -> list[Any]:
    """The run's events as the gateway recorded them (a join from the start), with their ids."""
    params = {"runId": run_id, "offset": "-1", "threadId": thread_id}
    response = await http.get("/agents/assistant", params=params)
    assert response.status_code == 200, response.text
    return [parse_frame(raw) for raw in response.text.split("\n\n") if raw.strip()]


def effects_for(stack: Stack, tool_call_id: str) -> list[dict[str, Any]]:
    return [effect for effect in stack.outbox.effects() if effect["key"] == tool_call_id]


@pytest.mark.parametrize("how", ["drop", "end"])
async def test_reconnects_after_the_connection_is_cut(
    proxy: Proxy, stack: Stack, gated: httpx.AsyncClient, thread_id: str, how: Cut
):
    """The resumed run's stream is cut right after its first event (`RUN_STARTED`, the tool
    still running): "drop" breaks the body off, "end" ends it cleanly without a terminal
    event. The client re-sends the POST with `Last-Event-ID` and gets the rest, once."""
    proxy.cut_next(resumes, how)
    async with gate_opens_on(proxy, stack, lambda r: "last-event-id" in r.headers):
        snapshots = await chat(
            proxy, thread_id, {"send": EMAIL}, {"resolve": [approve(0)]}, record=False
        )
    asked, done = snapshots
    [pending] = asked["interrupts"]

    first, *reconnects = done["requests"]
    assert [e["type"] for e in first["events"]] == ["RUN_STARTED"]
    [cut_at] = first["ids"]
    assert ("readError" in first) == (how == "drop")
    assert [r["headers"].get("last-event-id") for r in reconnects] == [cut_at]  # just one
    [again] = reconnects
    run_id = first["body"]["runId"]
    assert "last-event-id" not in first["headers"]
    assert again["method"] == "POST" and again["body"] == first["body"]  # same run, same resume
    assert again["headers"]["x-run-id"] == run_id == first["headers"]["x-run-id"]

    # Every event of the run reached the client once, in order, and nothing was redone.
    recorded = await whole_run(gated, thread_id, run_id)
    assert [cut_at, *again["ids"]] == [frame.id for frame in recorded]
    assert [c["type"] for c in done["chunks"]] == [frame.data["type"] for frame in recorded]
    assert done["error"] is None and done["interrupts"] == []
    results = [p for p in parts(done, "tool-result") if p["toolCallId"] == pending["toolCallId"]]
    assert len(results) == 1
    assert sum("Sent the email to ada@example.com" in text for text in said(done)) == 1
    assert len(effects_for(stack, pending["toolCallId"])) == 1
    STREAMS.extend(delivered_streams(snapshots))


@pytest.mark.parametrize(
    ("text", "answers", "sent", "not_sent"),
    [
        (EMAIL, [approve(0)], ["ada@example.com"], []),
        (
            EMAILS,
            [approve(0), {"index": 1, "cancel": True}, approve(2)],
            ["ada@example.com", "cy@example.com"],
            ["bob@example.com"],
        ),
    ],
    ids=["one-email", "three-emails"],
)
async def test_a_reloaded_page_resolves_the_pending_interrupts(
    proxy: Proxy,
    stack: Stack,
    thread_id: str,
    text: str,
    answers: list[dict[str, Any]],
    sent: list[str],
    not_sent: list[str],
):
    stack.gate.set()
    asked, reloaded, done = await chat(
        proxy,
        thread_id,
        {"send": text},
        {"reload": True, "persistence": True},
        {"resolve": answers},
    )
    interrupted_run = asked["requests"][0]["body"]["runId"]

    # The new page hydrated the thread: the transcript and the pause, resolvable.
    [hydrate] = reloaded["requests"]
    assert hydrate["method"] == "GET"
    assert dict(httpx.URL(hydrate["url"]).params) == {"threadId": thread_id}
    assert [m["role"] for m in reloaded["messages"]] == ["user", "assistant"]
    assert [p["content"] for p in parts(reloaded, "text")][:1] == [text]
    items = reloaded["interrupts"]
    assert [i["id"] for i in items] == [i["id"] for i in asked["interrupts"]]
    for item in items:
        assert (item["kind"], item["canResolve"], item["reason"]) == ("generic", True, "tool_call")

    # Resolving them continues the interrupted run.
    [resume] = done["requests"]
    body = resume["body"]
    assert body["parentRunId"] == interrupted_run and body["runId"] != interrupted_run
    assert [r["interruptId"] for r in body["resume"]] == sorted(i["id"] for i in items)
    assert done["error"] is None and done["interrupts"] == []
    for address in sent:
        assert sum(f"Sent the email to {address}" in t for t in said(done)) == 1
    for address in not_sent:
        assert not any(f"Sent the email to {address}" in t for t in said(done))
    emailed = [e for i in items for e in effects_for(stack, i["toolCallId"])]
    assert len(emailed) == len(sent)


async def visible(client: Client, run_id: str) -> None:
    """Wait until the run is found by its id alone: the join (`?runId&offset=-1`, no
    threadId) finds its thread through the `AguiRunIds` search attribute, which may lag."""
    while await gateway_streaming.find_thread(client, run_id) is None:
        await asyncio.sleep(0.05)


async def reload_while_running(
    proxy: Proxy, stack: Stack, client: Client, thread_id: str
) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """A page resumes an email approval and goes away while `sendEmail` waits at the gate;
    a new page (`persistence: true`) attaches. The gate opens once it asks to join the run.

    Returns the interrupt, the resumed run's id and the new page's snapshot.
    """
    first_page = await chat(
        proxy,
        thread_id,
        {"send": EMAIL},
        {"resolve": [approve(0)], "wait": {"event": "RUN_STARTED"}},
        record=False,  # the first page left mid-run: its stream ends unfinished
    )
    asked, running = first_page
    [pending] = asked["interrupts"]
    run_id = running["requests"][0]["body"]["runId"]
    assert running["isLoading"] and effects_for(stack, pending["toolCallId"]) == []
    await visible(client, run_id)

    def joins(request: Request) -> bool:
        return request.method == "GET" and request.query.get("runId") == run_id

    async with gate_opens_on(proxy, stack, joins):
        [reloaded] = await chat(proxy, thread_id, {"attach": True}, persistence=True, record=False)
    STREAMS.extend(delivered_streams([*first_page, reloaded]))
    return pending, run_id, reloaded


async def test_a_reloaded_page_joins_the_running_run(
    proxy: Proxy, stack: Stack, gated: httpx.AsyncClient, client: Client, thread_id: str
):
    """The reloaded page learns of the active run by hydrating, joins it from the start
    (by runId alone, as TanStack sends no threadId) and follows it to the end, once."""
    pending, run_id, reloaded = await reload_while_running(proxy, stack, client, thread_id)

    hydrate, join = reloaded["requests"]
    assert dict(httpx.URL(hydrate["url"]).params) == {"threadId": thread_id}
    hydrated = json.loads(hydrate["text"])
    assert (hydrated["activeRun"], hydrated["interrupts"]) == ({"runId": run_id}, None)
    assert dict(httpx.URL(join["url"]).params) == {"offset": "-1", "runId": run_id}

    recorded = await whole_run(gated, thread_id, run_id)
    assert join["ids"] == [frame.id for frame in recorded]
    assert [c["type"] for c in reloaded["chunks"]] == [frame.data["type"] for frame in recorded]
    assert recorded[0].data["type"] == "RUN_STARTED" and recorded[-1].data["type"] == "RUN_FINISHED"

    assert reloaded["error"] is None and not reloaded["isLoading"]
    assert reloaded["messages"][0]["role"] == "user"
    assert [p["content"] for p in parts(reloaded, "text")].count(EMAIL) == 1
    assert sum("Sent the email to ada@example.com" in text for text in said(reloaded)) == 1
    assert len(effects_for(stack, pending["toolCallId"])) == 1


async def test_a_reloaded_page_keeps_the_tool_call_of_the_joined_run(
    proxy: Proxy, stack: Stack, client: Client, thread_id: str
):
    """After the join the transcript is whole: the approved tool call, its result, the answer."""
    pending, _, reloaded = await reload_while_running(proxy, stack, client, thread_id)
    calls = [p for p in parts(reloaded, "tool-call") if p["id"] == pending["toolCallId"]]
    assert len(calls) == 1 and calls[0]["output"]["sent"] is True
    results = [
        p for p in parts(reloaded, "tool-result") if p["toolCallId"] == pending["toolCallId"]
    ]
    assert len(results) == 1
    assert sum("Sent the email to ada@example.com" in text for text in said(reloaded)) == 1
