"""CopilotKit's real `useInterrupt` (`@copilotkit/react-core` 1.74.0, its v2 API) answering the
assistant's interrupts on a page without a browser (react-dom under jsdom: use_interrupt.mjs),
with each of the two ways CopilotKit reaches an AG-UI agent (issue 39):

- "agent": a self-managed `HttpAgent` (`@ag-ui/client` 0.0.59, the version CopilotKit pins)
  pointed at the gateway's `/agents/assistant`;
- "runtime": CopilotKit's runtime (`@copilotkit/runtime` 1.75.0, runtime.mjs) in between, its
  AG-UI agent pointed at the gateway (through `tests/gateway/proxy.py`, which records what
  reached the gateway).

CopilotKit sends a resume under the `runId` of the run that delivered the interrupts (its run
handler's `pinRunIdOnWire`): the gateway must take it as the continuation it is, apply the
answers once and close the interrupts, not answer it as a re-sent request. Every scenario of a
transport runs in one Node process, a page after another, each on a thread of its own; the two
transports, the runtime restart and the expired form run side by side (`runs`).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from temporalio.client import Client
from temporalio.worker import Worker

from ag_ui_temporal.settings import Settings
from tests.agui import STREAMS
from tests.conftest import serve_gateway
from tests.copilotkit.driver import (
    AWAIT_EXPIRED,
    CONNECT,
    REDELIVER,
    RELOAD,
    Step,
    answer,
    approve,
    cancel,
    copilotkit_runtime,
    finished,
    offered,
    requires_copilotkit,
    run_script,
    send,
    steps,
    streams,
)
from tests.effects import EffectLog
from tests.gateway.proxy import Proxy
from tests.node_clients import validate_streams

pytestmark = requires_copilotkit

EMAIL = "Send an email to ada@example.com saying hi"
EMAILS = "Send emails to ada@example.com, bob@example.com and cy@example.com"
REPORT = "File the quarterly report"
FIGURES = {"quarter": "Q3", "year": 2026, "revenue": 1250000}
DRAFTS = "Delete my drafts"
HELP = "What can you do?"
OWNER = "carol"
"""Who the pages are (the gateway's dev auth: `X-Principal`, in CopilotKit's `headers`)."""

SCENARIOS: dict[str, list[dict[str, Any]]] = {
    "approve": [send(EMAIL), answer(approve(0))],
    "reject": [send(EMAIL), answer(approve(0, approved=False))],
    "cancel": [send(EMAIL), answer(cancel(0))],
    "three": [send(EMAILS), answer(approve(0), cancel(1), approve(2))],
    "form": [send(REPORT), answer({"index": 0, "payload": FIGURES})],
    "confirm": [send(DRAFTS), answer({"index": 0, "payload": True})],
}
RELOADED = {
    # A self-managed HttpAgent cannot connect (`connect` is not implemented): the page runs
    # the agent without a new message, and the gateway delivers the open interrupts again.
    "agent": [send(EMAIL), RELOAD, REDELIVER, answer(approve(0))],
    # The runtime replays the thread's runs from its memory on connect.
    "runtime": [send(EMAIL), RELOAD, answer(approve(0))],
}


@dataclass
class Pages:
    """What every scenario's page saw, through one transport."""

    transport: str
    threads: dict[str, str]
    results: dict[str, Any]
    upstream: list[dict[str, Any]] = field(default_factory=list)
    """With the runtime in between: every request that reached the gateway."""

    def steps(self, name: str) -> list[Step]:
        return steps(self.results[name])

    def reached_gateway(self, body: dict[str, Any]) -> bool:
        """Whether the gateway got this run's `runId` and `resume` as the page sent them
        (the runtime changes neither)."""
        if self.transport == "agent":
            return True
        sent = (body["runId"], body.get("resume"))
        return sent in [(r["runId"], r["body"].get("resume")) for r in self.upstream]


async def transport_pages(transport: str, gateway_url: str) -> Pages:
    """Every scenario through `transport`, in one Node process, a page after another."""
    tag = uuid.uuid4().hex[:8]
    scenarios = {**SCENARIOS, "reload": RELOADED[transport]}
    threads = {name: f"ck-{transport}-{name}-{tag}" for name in scenarios}
    job: dict[str, Any] = {
        "headers": {"X-Principal": OWNER},
        "scenarios": [
            {"name": name, "threadId": threads[name], "steps": scenario}
            for name, scenario in scenarios.items()
        ],
    }
    if transport == "agent":
        result = await run_script("use_interrupt.mjs", {**job, "agentUrl": agent_url(gateway_url)})
        STREAMS.extend(streams(*result["results"].values()))  # the gateway's, for 1.0
        return Pages(transport, threads, result["results"])
    async with Proxy(gateway_url) as proxy, copilotkit_runtime(agent_url(proxy.url)) as runtime:
        job |= {"runtimeUrl": runtime, "gatewayUrl": agent_url(gateway_url)}
        result = await run_script("use_interrupt.mjs", job)
    return Pages(transport, threads, result["results"], upstream(proxy))


@dataclass
class Restart:
    """A page through a runtime, then one through a new runtime process on the same thread."""

    thread_id: str
    before: list[Step]
    after: list[Step]
    upstream: list[dict[str, Any]]


async def restart_pages(gateway_url: str) -> Restart:
    thread_id = f"ck-restart-{uuid.uuid4().hex[:8]}"

    async def page(proxy: Proxy, *scenario: dict[str, Any]) -> list[Step]:
        async with copilotkit_runtime(agent_url(proxy.url)) as runtime:
            job: dict[str, Any] = {"runtimeUrl": runtime, "gatewayUrl": agent_url(gateway_url)}
            job["scenarios"] = [{"name": "page", "threadId": thread_id, "steps": list(scenario)}]
            return steps((await run_script("use_interrupt.mjs", job))["results"]["page"])

    async with Proxy(gateway_url) as proxy:
        before = await page(proxy, send(EMAIL))
        after = await page(proxy, CONNECT, REDELIVER, answer(approve(0)))
    return Restart(thread_id, before, after, upstream(proxy))


@dataclass
class Expired:
    """A page on a form that expires (its own gateway gives forms 2 s)."""

    thread_id: str
    result: dict[str, Any]
    offered: list[dict[str, Any]]
    """What the gateway's hydrate offers on the thread afterwards."""


async def expired_page(settings: Settings, client: Client) -> Expired:
    thread_id = f"ck-expired-{uuid.uuid4().hex[:8]}"
    short = settings.model_copy(update={"input_expires_in": timedelta(seconds=2)})
    scenario = [
        send(REPORT),
        AWAIT_EXPIRED,
        answer({"index": 0, "payload": FIGURES}),
        send(HELP),
        RELOAD,
        send(HELP),
    ]
    async with (
        serve_gateway(short, client) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        job: dict[str, Any] = {"agentUrl": agent_url(url)}
        job["scenarios"] = [{"name": "form", "threadId": thread_id, "steps": scenario}]
        result = (await run_script("use_interrupt.mjs", job))["results"]["form"]
        return Expired(thread_id, result, await offered(http, thread_id))


@dataclass
class Runs:
    """What this module's pages saw; they run side by side (Node processes of their own,
    threads of their own): their time is mostly the agent's and the workflows'."""

    transports: dict[str, Pages]
    restart: Restart
    expired: Expired


@pytest.fixture(scope="module")
async def runs(settings: Settings, client: Client, worker: Worker, gateway_url: str) -> Runs:
    agent, runtime, restart, expired = await asyncio.gather(
        transport_pages("agent", gateway_url),
        transport_pages("runtime", gateway_url),
        restart_pages(gateway_url),
        expired_page(settings, client),
    )
    return Runs({"agent": agent, "runtime": runtime}, restart, expired)


@pytest.fixture(scope="module", params=["agent", "runtime"])
def pages(request: pytest.FixtureRequest, runs: Runs) -> Pages:
    transport: str = request.param
    return runs.transports[transport]


def agent_url(base: str) -> str:
    return f"{base}/agents/assistant"


def upstream(proxy: Proxy) -> list[dict[str, Any]]:
    """The runs that reached the gateway through the proxy."""
    return [
        {"runId": r.json()["runId"], "body": r.json()} for r in proxy.requests if r.method == "POST"
    ]


def asked(step: Step, reasons: list[str]) -> list[dict[str, Any]]:
    """The page shows the run's interrupts, one card each; returns them."""
    step.clean()
    outcome = finished(step.post())["outcome"]
    assert outcome["type"] == "interrupt", outcome
    shown = step.interrupts
    assert [i["id"] for i in shown] == [i["id"] for i in outcome["interrupts"]]
    assert [i["reason"] for i in shown] == reasons
    assert [(c["id"], c["reason"]) for c in step.cards] == [(i["id"], i["reason"]) for i in shown]
    return shown


async def resumed(
    pages: Pages,
    http: httpx.AsyncClient,
    name: str,
    delivered: Step,
    done: Step,
    entries: list[dict[str, Any]],
) -> dict[str, Any]:
    """One resume for every answer, under the run id of the run that delivered the
    interrupts (CopilotKit pins it), taken as a continuation: the run goes on to its end,
    the page shows no interrupt, and the gateway offers none. Returns the resume's body."""
    done.clean()
    post = done.post()  # nothing was sent before every open interrupt had its answer
    body: dict[str, Any] = post["body"]
    assert body["runId"] == delivered.post()["body"]["runId"]
    assert body["resume"] == entries
    assert pages.reached_gateway(body)
    assert post["status"] == 200
    outcome = finished(post)["outcome"]
    still = [i["id"] for i in outcome.get("interrupts", [])]
    assert outcome["type"] == "success", (
        f"the resume was not taken as a continuation: {[e['type'] for e in post['events']]}, "
        f"interrupts {still} still open"
    )
    assert done.interrupts == [] and done.cards == []
    assert await offered(http, pages.threads[name]) == []
    return body


def resolved(interrupt: dict[str, Any], payload: Any) -> dict[str, Any]:
    return {"interruptId": interrupt["id"], "status": "resolved", "payload": payload}


def cancelled(interrupt: dict[str, Any]) -> dict[str, Any]:
    return {"interruptId": interrupt["id"], "status": "cancelled"}


def tool_messages(body: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        (m["toolCallId"], json.loads(m["content"])) for m in body["messages"] if m["role"] == "tool"
    ]


def effects(outbox: EffectLog, tool: str, interrupt: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in outbox.effects(tool) if e["key"] == interrupt["toolCallId"]]


def said_once(step: Step, sentence: str) -> None:
    assert sum(sentence in text for text in step.said()) == 1, step.said()


async def test_approve(pages: Pages, http: httpx.AsyncClient, outbox: EffectLog) -> None:
    ask, done = pages.steps("approve")
    [interrupt] = asked(ask, ["tool_call"])
    assert interrupt["toolCallId"] and interrupt["responseSchema"]
    body = await resumed(
        pages, http, "approve", ask, done, [resolved(interrupt, {"approved": True})]
    )
    # CopilotKit also sends the answer as the call's tool message: not the call's result.
    assert tool_messages(body) == [(interrupt["toolCallId"], {"approved": True})]
    said_once(done, "Sent the email to ada@example.com")
    assert len(effects(outbox, "sendEmail", interrupt)) == 1


async def test_reject(pages: Pages, http: httpx.AsyncClient, outbox: EffectLog) -> None:
    ask, done = pages.steps("reject")
    [interrupt] = asked(ask, ["tool_call"])
    await resumed(pages, http, "reject", ask, done, [resolved(interrupt, {"approved": False})])
    said_once(done, "I did not carry out the email to ada@example.com: you rejected it.")
    assert effects(outbox, "sendEmail", interrupt) == []


async def test_cancel(pages: Pages, http: httpx.AsyncClient, outbox: EffectLog) -> None:
    ask, done = pages.steps("cancel")
    [interrupt] = asked(ask, ["tool_call"])
    body = await resumed(pages, http, "cancel", ask, done, [cancelled(interrupt)])
    assert tool_messages(body) == [(interrupt["toolCallId"], {"status": "cancelled"})]
    said_once(done, "I did not carry out the email to ada@example.com: it was cancelled.")
    assert effects(outbox, "sendEmail", interrupt) == []


async def test_three_approvals_in_one_run(
    pages: Pages, http: httpx.AsyncClient, outbox: EffectLog
) -> None:
    ask, done = pages.steps("three")
    ada, bob, cy = asked(ask, ["tool_call"] * 3)
    entries = [resolved(ada, {"approved": True}), cancelled(bob), resolved(cy, {"approved": True})]
    await resumed(pages, http, "three", ask, done, entries)
    said_once(done, "Sent the email to ada@example.com")
    said_once(done, "I did not carry out the email to bob@example.com: it was cancelled.")
    said_once(done, "Sent the email to cy@example.com")
    assert [len(effects(outbox, "sendEmail", i)) for i in (ada, bob, cy)] == [1, 0, 1]


async def test_form_with_a_deadline(
    pages: Pages, http: httpx.AsyncClient, outbox: EffectLog
) -> None:
    ask, done = pages.steps("form")
    [form] = asked(ask, ["input_required"])
    assert form["responseSchema"]["properties"]["quarter"]["enum"] == ["Q1", "Q2", "Q3", "Q4"]
    assert datetime.fromisoformat(form["expiresAt"]) > datetime.now(UTC)  # in 2 days
    body = await resumed(pages, http, "form", ask, done, [resolved(form, FIGURES)])
    assert tool_messages(body) == []  # CopilotKit adds a tool message for `tool_call`s only
    said_once(done, "Filed the Q3 2026 quarterly report")
    [effect] = effects(outbox, "fileQuarterlyReport", form)
    assert effect["args"] == FIGURES


async def test_confirmation(pages: Pages, http: httpx.AsyncClient, outbox: EffectLog) -> None:
    ask, done = pages.steps("confirm")
    [question] = asked(ask, ["confirmation"])
    await resumed(pages, http, "confirm", ask, done, [resolved(question, True)])
    said_once(done, "Deleted your drafts.")
    assert len(effects(outbox, "deleteDrafts", question)) == 1


async def test_approve_after_a_reload(
    pages: Pages, http: httpx.AsyncClient, outbox: EffectLog
) -> None:
    """A new page on the thread. With a self-managed `HttpAgent` CopilotKit's connect does
    nothing (no request: `HttpAgent` has no `connect`), so the page shows nothing until it
    runs the agent without a message, which the gateway answers with the transcript and
    the open interrupt. Through the runtime, connect replays the runtime's memory of the
    thread. Either way the resume goes under the run id of what delivered the interrupt."""
    ask, reload, *restored, done = pages.steps("reload")
    [interrupt] = asked(ask, ["tool_call"])
    reload.clean()
    if pages.transport == "agent":
        assert reload.requests == [] and reload.messages == [] and reload.interrupts == []
        [redeliver] = restored
        assert (
            "resume" not in redeliver.post()["body"] and redeliver.post()["body"]["messages"] == []
        )
        delivered = redeliver
    else:
        assert restored == []
        assert [r["url"].rsplit("/", 2)[-2:] for r in reload.posts()] == [["assistant", "connect"]]
        delivered = reload
    [shown] = asked(delivered, ["tool_call"])
    assert shown["id"] == interrupt["id"]
    assert [m["content"] for m in delivered.messages if m["role"] == "user"] == [EMAIL]
    await resumed(pages, http, "reload", delivered, done, [resolved(shown, {"approved": True})])
    said_once(done, "Sent the email to ada@example.com")
    assert len(effects(outbox, "sendEmail", interrupt)) == 1


async def test_the_pages_credentials_reach_the_gateway(
    pages: Pages, http: httpx.AsyncClient
) -> None:
    """CopilotKit's `headers` go with every run; the runtime forwards `Authorization` and
    `X-*` headers to its agent: the threads are the page's principal's."""
    thread_id = pages.threads["approve"]

    async def transcript(principal: str) -> list[Any]:
        params = {"threadId": thread_id}
        response = await http.get(
            "/agents/assistant", params=params, headers={"X-Principal": principal}
        )
        assert response.status_code == 200, response.text
        return list(response.json()["messages"])

    assert await transcript(OWNER) and await transcript("mallory") == []


async def test_every_stream_is_valid_for_copilotkits_ag_ui(pages: Pages) -> None:
    """What the pages received (the gateway's streams, or the runtime's) passes `@ag-ui/core`
    0.0.59's schemas and `@ag-ui/client` 0.0.59's order rules."""
    received = streams(*pages.results.values())
    assert received
    await validate_streams(received)


async def test_after_a_runtime_restart_the_gateway_delivers_the_interrupt(
    runs: Runs, http: httpx.AsyncClient, outbox: EffectLog
) -> None:
    """The runtime's memory of a thread goes with its process: after a restart, connect
    restores nothing, and the page gets the open interrupt from the gateway by running the
    agent without a message."""
    [ask], [connect, redeliver, done] = runs.restart.before, runs.restart.after
    [interrupt] = asked(ask, ["tool_call"])
    connect.clean()
    assert connect.interrupts == [] and connect.messages == []
    [shown] = asked(redeliver, ["tool_call"])
    assert shown["id"] == interrupt["id"]
    pages = Pages("runtime", {"page": runs.restart.thread_id}, {}, runs.restart.upstream)
    await resumed(pages, http, "page", redeliver, done, [resolved(shown, {"approved": True})])
    said_once(done, "Sent the email to ada@example.com")
    assert len(effects(outbox, "sendEmail", interrupt)) == 1


async def test_an_expired_form(runs: Runs, outbox: EffectLog) -> None:
    """A form whose deadline passed: CopilotKit refuses to resume it (nothing is sent, the
    card goes), the gateway's timer has expired it (hydrate offers nothing), and a page
    with a new agent is answered at once (the expired form blocks nothing). The page's
    `HttpAgent` keeps the expired interrupt pending and refuses any further run itself.
    Its own gateway gives forms 2 s (`INPUT_EXPIRES_IN`), in front of the session's worker."""
    result = runs.expired.result
    assert runs.expired.offered == []
    STREAMS.extend(streams(result))
    ask, expired, late, blocked, reload, again = steps(result)
    [form] = asked(ask, ["input_required"])
    assert form["expiresAt"]
    expired.clean()
    late.clean()
    assert late.posts() == [] and late.interrupts == [] and late.cards == []
    assert any(f"interrupt {form['id']} expired" in log["text"] for log in late.logs), late.logs
    assert blocked.posts() == []
    assert [e["message"] for e in blocked.errors] == [
        f"Thread has 1 pending interrupt(s) not addressed by resume: {form['id']}"
    ]
    reload.clean()
    again.clean()
    assert finished(again.post())["outcome"] == {"type": "success"}
    assert any("quarterly report" in text for text in again.said())
    assert effects(outbox, "fileQuarterlyReport", form) == []
