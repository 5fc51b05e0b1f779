"""Limits with clear answers: 413/422 before a stream, RUN_ERROR once a run is
known, nothing changed on refusal; resume metadata kept in the audit trail, the `ag-ui`
namespace and the server's own run ids refused from clients.

A stack of its own (worker + gateway) runs with small limits so each is cheap to cross.
"""

from __future__ import annotations

import asyncio
import json
import socket
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http.client import HTTPResponse
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel
from temporalio import workflow
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from ag_ui_temporal.gateway.streaming import find_thread
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.worker import build_worker
from ag_ui_temporal.workflows.chains.definitions import ChainDefinition, ChainInput
from ag_ui_temporal.workflows.chains.workflow import ApprovalChain
from ag_ui_temporal.workflows.contract import (
    REFUSED_METADATA_KEY,
    RUN_UPDATE,
    InterruptStatus,
    ResumeItem,
    RunRequest,
    RunResult,
    ThreadView,
    run_digest,
    run_update_id,
    server_run_id,
    thread_workflow_id,
)
from ag_ui_temporal.workflows.contract.chains import CHAIN_QUERY, ChainView, inbox_thread
from ag_ui_temporal.workflows.contract.names import MAX_RUN_ID_BYTES
from ag_ui_temporal.workflows.producers import ThreadInterrupt, offer_in_thread
from ag_ui_temporal.workflows.producers.owner import settled_box
from tests.agui import (
    cancel,
    finished,
    interrupts,
    new_id,
    resolve,
    run,
    run_body,
    texts,
    thread_state,
    types,
    user,
)
from tests.conftest import serve_gateway
from tests.gateway.threads import start_short_thread, wait_for_new_run

EMAIL = "Send an email to ada@example.com saying hi"
SMALL: dict[str, Any] = {
    "max_body_bytes": 64 << 10,
    "max_messages": 5,
    "max_resume_entries": 3,
    "max_payload_bytes": 1024,
    "max_string_length": 2_000,
    "max_id_length": 64,
    "max_json_depth": 8,
    "max_interrupts_per_run": 3,
    "max_pending_interrupts": 5,
}


@dataclass
class Limited:
    http: httpx.AsyncClient
    settings: Settings


@pytest.fixture(scope="module")
async def limited(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[Limited]:
    name = f"limits-{uuid.uuid4().hex[:8]}"
    settings = Settings(data_dir=data_dir / name, task_queue=name, **SMALL)
    async with (
        build_worker(client, settings, executor),
        serve_gateway(settings, client) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        yield Limited(http, settings)


async def missing(client: Client, thread_id: str) -> bool:
    try:
        await thread_state(client, thread_id)
    except RPCError as err:
        return err.status == RPCStatusCode.NOT_FOUND
    return False


def assert_json_4xx(response: httpx.Response, status: int, *words: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    detail = response.json()["detail"]
    assert all(word in str(detail) for word in words), detail


# -- 413: the body ------------------------------------------------------------------------


async def test_oversize_body_with_content_length_is_413(
    limited: Limited, client: Client, thread_id: str
):
    body = run_body(thread_id, "x" * 70_000)
    response = await limited.http.post("/agents/assistant", json=body)
    assert_json_4xx(response, 413, "MAX_BODY_BYTES")
    assert await missing(client, thread_id)


async def test_oversize_chunked_body_is_413_while_read(
    limited: Limited, client: Client, thread_id: str
):
    async def chunks() -> AsyncIterator[bytes]:
        yield f'{{"threadId": "{thread_id}", "runId": "r", "messages": [], "state": "'.encode()
        for _ in range(40):  # 80 KiB, over the 64 KiB limit, with no Content-Length
            yield b"y" * 2048
        yield b'"}'

    response = await limited.http.post(
        "/agents/assistant", content=chunks(), headers={"content-type": "application/json"}
    )
    assert "content-length" not in response.request.headers
    assert response.request.headers["transfer-encoding"] == "chunked"
    assert_json_4xx(response, 413, "MAX_BODY_BYTES")
    assert await missing(client, thread_id)


async def test_a_chunked_body_under_the_limit_runs(limited: Limited, thread_id: str):
    raw = httpx.Request("POST", "/", json=run_body(thread_id, EMAIL)).read()

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(raw), 16):
            yield raw[start : start + 16]

    response = await limited.http.post(
        "/agents/assistant", content=chunks(), headers={"content-type": "application/json"}
    )
    assert response.status_code == 200, response.text
    assert "RUN_FINISHED" in response.text


TWENTY_MIB = 20 << 20


def post_everything_then_read(url: str) -> tuple[int, dict[str, Any]]:
    """As urllib does: the whole body (with its Content-Length) is written before reading."""
    request = urllib.request.Request(
        url, data=b"x" * TWENTY_MIB, headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def chunked_everything_then_read(url: str) -> tuple[int, dict[str, Any]]:
    """A plain socket writing a chunked 20 MiB body (no Content-Length) before reading."""
    parts = urllib.parse.urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=60) as sock:
        head = f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        sock.sendall(f"{head}Transfer-Encoding: chunked\r\n\r\n".encode())
        chunk = b"%x\r\n%s\r\n" % (64 << 10, b"y" * (64 << 10))
        for _ in range(TWENTY_MIB // (64 << 10)):
            sock.sendall(chunk)
        sock.sendall(b"0\r\n\r\n")
        response = HTTPResponse(sock)
        response.begin()
        return response.status, json.loads(response.read())


@pytest.mark.parametrize("send", [post_everything_then_read, chunked_everything_then_read])
async def test_a_client_writing_a_huge_body_before_reading_gets_the_413(
    limited: Limited, send: Callable[[str], tuple[int, dict[str, Any]]]
):
    url = f"{limited.http.base_url}/agents/assistant"
    for _ in range(3):  # every time, not by luck (a reset came 5 times in 5)
        status, body = await asyncio.to_thread(send, url)
        assert status == 413 and "MAX_BODY_BYTES" in body["detail"]
    assert (await limited.http.get("/healthz")).status_code == 200  # and it still serves


def expect_continue_then_read(url: str) -> tuple[int, dict[str, Any]]:
    """A client that asks first (`Expect: 100-continue`) is answered without being drained."""
    parts = urllib.parse.urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=60) as sock:
        head = f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        expect = f"Content-Length: {TWENTY_MIB}\r\nExpect: 100-continue\r\n\r\n"
        sock.sendall(f"{head}{expect}".encode())
        reader = sock.makefile("rb")
        status = int(reader.readline().split()[1])  # the first answer: no `100 Continue`
        headers = dict(
            line.decode().rstrip("\r\n").lower().split(": ", 1)
            for line in iter(reader.readline, b"\r\n")
        )
        return status, json.loads(reader.read(int(headers["content-length"])))


async def test_a_client_expecting_continue_gets_the_413_at_once(limited: Limited):
    url = f"{limited.http.base_url}/agents/assistant"
    status, body = await asyncio.to_thread(expect_continue_then_read, url)
    assert status == 413 and "MAX_BODY_BYTES" in body["detail"]


async def test_the_body_limit_covers_every_post(limited: Limited):
    response = await limited.http.post("/approvals", content=b"{" + b" " * 70_000 + b"}")
    assert_json_4xx(response, 413, "MAX_BODY_BYTES")  # refused before routing (not a 405)


# -- 422: the parsed input -----------------------------------------------------------------


def over_limit(thread_id: str, pending: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    deep: Any = "leaf"
    for _ in range(10):
        deep = {"d": deep}
    answer = {"approved": True}
    return [
        ("MAX_MESSAGES", run_body(thread_id, messages=[user("hi") for _ in range(6)])),
        ("MAX_RESUME_ENTRIES", run_body(thread_id, resume=[resolve(pending, answer)] * 4)),
        ("MAX_PAYLOAD_BYTES", run_body(thread_id, state={"blob": "z" * 1500})),
        ("MAX_PAYLOAD_BYTES", run_body(thread_id, forwardedProps={"blob": "z" * 1500})),
        (
            "MAX_PAYLOAD_BYTES",
            run_body(thread_id, resume=[resolve(pending, {"approved": True, "x": "z" * 1500})]),
        ),
        (
            "MAX_PAYLOAD_BYTES",
            run_body(
                thread_id, resume=[{**resolve(pending, answer), "metadata": {"n": "z" * 1500}}]
            ),
        ),
        ("MAX_STRING_LENGTH", run_body(thread_id, "w" * 2_001)),
        (
            "MAX_STRING_LENGTH",
            run_body(thread_id, tools=[{"name": "t", "description": "d" * 2_001}]),
        ),
        (
            "MAX_STRING_LENGTH",
            run_body(thread_id, context=[{"description": "c", "value": "v" * 2_001}]),
        ),
        ("MAX_ID_LENGTH", run_body(thread_id, runId="r" * 65)),
        ("MAX_ID_LENGTH", run_body(thread_id, resume=[resolve({"id": "i" * 65}, answer)])),
        ("MAX_JSON_DEPTH", run_body(thread_id, state=deep)),
        (
            "reserved",
            run_body(thread_id, resume=[{**resolve(pending, answer), "metadata": {"ag-ui": {}}}]),
        ),
        (
            "ag-ui:resolvedBy",
            run_body(
                thread_id,
                resume=[{**resolve(pending, answer), "metadata": {"ag-ui:resolvedBy": "mallory"}}],
            ),
        ),
    ]


async def test_each_limit_is_a_422_naming_it_and_changes_nothing(
    limited: Limited, client: Client, thread_id: str
):
    [pending] = interrupts(await run(limited.http, thread_id, text=EMAIL))
    before = await thread_state(client, thread_id)
    for limit, body in over_limit(thread_id, pending):
        response = await limited.http.post("/agents/assistant", json=body)
        assert_json_4xx(response, 422, limit)
        assert "Traceback" not in response.text
    assert await thread_state(client, thread_id) == before
    # the same resume within the limits goes through, metadata and all
    ok = {**resolve(pending, {"approved": True}), "metadata": {"tanstack:via": "test"}}
    assert "Sent the email" in texts(await run(limited.http, thread_id, resume=[ok]))


def raw_body(thread_id: str, **tokens: str) -> bytes:
    """A run's body with `@name@` placeholders replaced by raw JSON tokens (NaN, 1e400, ...)."""
    body = run_body(thread_id, "hi", **{k: f"@{k}@" for k in ("state", "forwardedProps")})
    text = json.dumps(body)
    for name, token in tokens.items():
        text = text.replace(f'"@{name}@"', token)
    return text.replace('"@state@"', "null").replace('"@forwardedProps@"', "null").encode()


@pytest.mark.parametrize(
    "content",
    [
        raw_body("THREAD", state='{"a": NaN}'),
        raw_body("THREAD", state='{"a": [1, Infinity]}'),
        raw_body("THREAD", forwardedProps="-Infinity"),
        raw_body("THREAD", state='{"big": 1e400}'),
    ],
    ids=["NaN", "Infinity", "-Infinity", "1e400"],
)
async def test_numbers_json_has_not_are_422(
    limited: Limited, client: Client, thread_id: str, content: bytes
):
    response = await limited.http.post(
        "/agents/assistant",
        content=content.replace(b"THREAD", thread_id.encode()),
        headers={"content-type": "application/json"},
    )
    assert_json_4xx(response, 422, "NaN, Infinity")
    assert await missing(client, thread_id)


async def test_ids_are_measured_in_utf8_bytes(limited: Limited, client: Client):
    """Within MAX_ID_LENGTH characters, past it in bytes: Temporal counts bytes."""
    most = limited.settings.max_id_length  # 64
    threads = {"a" * most: 200, "😀" * (most // 4): 200, "😀" * (most // 4 + 1): 422}
    for thread_id, status in threads.items():
        response = await limited.http.post("/agents/assistant", json=run_body(thread_id, "hi"))
        assert response.status_code == status, (len(thread_id.encode()), response.text)
        if status == 422:
            assert_json_4xx(response, 422, "threadId", "bytes", "MAX_ID_LENGTH")
            assert await missing(client, thread_id)


async def test_a_run_id_takes_at_most_its_share_of_the_run_index(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    """A thread indexes its last 20 run ids in one search attribute (2048 bytes of JSON,
    where `é` takes 6): a run id past its share would fail every workflow task that indexes."""
    for run_id in ("r" * 100, "é" * 17):
        response = await http.post("/agents/assistant", json=run_body(thread_id, runId=run_id))
        assert_json_4xx(response, 422, "runId", "search attribute")
    assert await missing(client, thread_id)
    # 20 runs of the longest run ids, the last still going when indexed: the thread answers
    for n in range(20):
        run_id = f"{n:02}" + "r" * (MAX_RUN_ID_BYTES - 2)
        events = await run(http, thread_id, text="hello", run_id=run_id)
        assert types(events)[-1] == "RUN_FINISHED"
    [pending] = interrupts(await run(http, thread_id, text=EMAIL, run_id="x" * MAX_RUN_ID_BYTES))
    resumed = run_body(thread_id, resume=[resolve(pending, {"approved": True})])
    resumed["runId"] = "y" * MAX_RUN_ID_BYTES  # the sendEmail activity: indexed while it runs
    response = await http.post("/agents/assistant", json=resumed)
    assert "Sent the email" in response.text, response.text[-300:]
    async with asyncio.timeout(60):  # the index was written (visibility lags a little)
        while await find_thread(client, resumed["runId"]) != thread_workflow_id(thread_id):
            await asyncio.sleep(0.05)


async def test_run_ids_past_their_share_never_brick_the_index(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    """A caller that skips the gateway's check (the `run` update sent directly): the thread
    leaves such run ids out of its index instead of failing every task that writes it."""
    await run(http, thread_id, text="hello")
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    for n in range(10):  # 10 x 300 bytes: past the 2048 of the search attribute
        request = RunRequest(
            thread_id=thread_id,
            run_id=f"{n}" + "r" * 299,
            agent="assistant",
            messages=[user("hello")],  # a model request: the run is indexed while it goes on
            principal="anonymous",
        )
        result = await handle.execute_update(
            RUN_UPDATE,
            request,
            id=run_update_id(request.run_id, run_digest(request)),
            result_type=RunResult,
        )
        assert result.events[-1]["type"] == "RUN_FINISHED"
    kinds = [event.event_type async for event in handle.fetch_history_events()]
    assert EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED not in kinds
    assert (await run(http, thread_id, text="hello"))[-1]["type"] == "RUN_FINISHED"


async def updates(handle: WorkflowHandle[Any, Any]) -> int:
    """How many updates (runs) the thread's history has taken."""
    accepted = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
    return len([e async for e in handle.fetch_history_events() if e.event_type == accepted])


SERVERS_RUN_IDS = ("decision-0123abcd", "decision-delivery-0123abcd", "run-0123456789abcdef")
"""Run ids as the server makes them: a decision's, the run that opens an offer for one, and a
thread's own run (which delivers offers)."""


async def test_the_servers_own_run_ids_are_refused_before_anything_is_recorded(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    """A run a client sent under an id the server makes would be answered in place of the
    server's run (the thread, and Temporal by update id, answer a known run id with its first
    result): such a `runId` is a 422 before any stream, and nothing is recorded."""
    for run_id in SERVERS_RUN_IDS:
        response = await http.post("/agents/assistant", json=run_body(thread_id, runId=run_id))
        assert_json_4xx(response, 422, "runId", "reserved")
    assert await missing(client, thread_id)  # no thread was started
    [pending] = interrupts(await run(http, thread_id, text=EMAIL))
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    runs = await updates(handle)
    before = await thread_state(client, thread_id)
    for run_id in SERVERS_RUN_IDS:
        for body in (
            run_body(thread_id, runId=run_id),  # an empty run: it would deliver `pending` again
            run_body(thread_id, runId=run_id, resume=[resolve(pending, {"approved": False})]),
        ):
            assert_json_4xx(await http.post("/agents/assistant", json=body), 422, "reserved")
    assert await updates(handle) == runs  # not one reached the thread
    assert await thread_state(client, thread_id) == before
    # ids that only look like them are the client's (TanStack's are `run-<ms>-<base36>`)
    alike = ("run-1733000000000-k3x9qa", "run-0123456789ABCDEF", "decisions-1", "Decision-1")
    assert not any(server_run_id(run_id) for run_id in alike)
    events = await run(http, f"{thread_id}-b", text="hello", run_id=alike[0])
    assert types(events)[-1] == "RUN_FINISHED"


async def test_a_new_thread_over_a_limit_is_never_created(
    limited: Limited, client: Client, thread_id: str
):
    body = run_body(thread_id, messages=[user("hi") for _ in range(6)])
    assert_json_4xx(await limited.http.post("/agents/assistant", json=body), 422, "MAX_MESSAGES")
    assert await missing(client, thread_id)


def test_resume_entries_never_below_interrupts_per_run():
    with pytest.raises(ValueError, match="MAX_RESUME_ENTRIES"):
        Settings(max_resume_entries=2, max_interrupts_per_run=3)


# -- reserved metadata, straight to the workflow --------------------------------------------


async def test_reserved_metadata_refused_by_the_workflow_itself(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    [pending] = interrupts(await run(http, thread_id, text=EMAIL, principal="alice"))
    before = await thread_state(client, thread_id)
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    forged = ResumeItem(
        interrupt_id=pending["id"],
        status="resolved",
        payload={"approved": True},
        has_payload=True,
        metadata={"ag-ui:resolvedBy": "mallory"},
    )
    request = RunRequest(
        thread_id=thread_id, run_id=new_id(), agent="assistant", resume=[forged], principal="alice"
    )
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await handle.execute_update(RUN_UPDATE, request, id=request.run_id, result_type=RunResult)
    cause = refused.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "INVALID_RESUME"
    assert "ag-ui:resolvedBy" in cause.message
    assert await thread_state(client, thread_id) == before


# -- resume metadata in the audit trail -----------------------------------------------------


async def test_resume_metadata_kept_across_continue_as_new(
    http: httpx.AsyncClient, client: Client, settings: Settings, thread_id: str
):
    handle = await start_short_thread(client, settings, thread_id, history_limit=12, owner="alice")
    [pending] = interrupts(await run(http, thread_id, text=EMAIL, principal="alice"))
    metadata = {"tanstack:submissionId": "s-1", "note": {"from": "the test"}}
    answer = {**resolve(pending, {"approved": True}), "metadata": metadata}
    await run(http, thread_id, resume=[answer], principal="alice")
    await wait_for_new_run(client, thread_id, handle.result_run_id)
    [record] = (await thread_state(client, thread_id)).interrupts
    assert record.status == InterruptStatus.RESOLVED
    assert record.resolution is not None and record.resolution.metadata == metadata
    assert record.resolved_by == "alice"  # who decided is a field of its own, not metadata


async def test_chain_decision_records_the_resume_metadata(
    http: httpx.AsyncClient, client: Client, settings: Settings
):
    bob = f"bob-{uuid.uuid4().hex[:6]}"
    chain_id = f"chain-{uuid.uuid4().hex[:10]}"
    definition = ChainDefinition.model_validate(
        {"name": "limits", "steps": [{"name": "manager", "approvers": [bob]}]}
    )
    chain = await client.start_workflow(
        ApprovalChain.run,
        ChainInput(chain_id=chain_id, definition=definition, thread_task_queue=settings.task_queue),
        id=chain_id,
        task_queue=settings.task_queue,
    )
    thread = inbox_thread(bob)
    await until(client, thread, lambda s: bool(s.interrupts))
    [item] = interrupts(await run(http, thread, agent="inbox", principal=bob))
    metadata = {"tanstack:submissionId": "sub-7", "device": "phone"}
    answer = {**resolve(item, {"decision": "approve", "comment": "ok"}), "metadata": metadata}
    await run(http, thread, agent="inbox", principal=bob, resume=[answer])
    state: ChainView = await chain.result()
    [decision] = [e for e in state.audit if e.kind == "decision"]
    assert (decision.principal, decision.decision, decision.metadata) == (bob, "approve", metadata)
    shown = (await http.get(f"/approvals/{chain_id}", headers={"X-Principal": bob})).json()
    [entry] = [e for e in shown["audit"] if e["kind"] == "decision"]
    assert entry["metadata"] == metadata
    assert (await chain.query(CHAIN_QUERY, result_type=ChainView)).status == "approved"


async def until(client: Client, thread_id: str, check: Callable[[ThreadView], bool]) -> ThreadView:
    async with asyncio.timeout(60):  # a liveness bound
        while True:
            try:
                state = await thread_state(client, thread_id)
                if check(state):
                    return state
            except RPCError:  # not started yet
                pass
            await asyncio.sleep(0.05)


# -- interrupts per run -----------------------------------------------------------------------


async def test_an_agent_asking_too_much_ends_the_run_with_limit_exceeded(
    limited: Limited, client: Client, thread_id: str
):
    text = "Send emails to a@example.com, b@example.com, c@example.com and d@example.com"
    events = await run(limited.http, thread_id, text=text)
    assert types(events)[0] == "RUN_STARTED" and events[-1]["type"] == "RUN_ERROR"
    assert events[-1]["code"] == "LIMIT_EXCEEDED"
    assert "more than 3 tool calls" in events[-1]["message"]
    # refused before any call past the limit was shown, and before any was asked about
    assert types(events).count("TOOL_CALL_START") <= 3 and "TOOL_CALL_END" not in types(events)
    state = await thread_state(client, thread_id)
    assert not state.interrupts
    # nothing waits: the thread takes new input
    [pending] = interrupts(await run(limited.http, thread_id, text=EMAIL))
    assert pending["reason"] == "tool_call"


class Questions(BaseModel):
    thread_id: str
    count: int
    thread_task_queue: str


@workflow.defn(sandboxed=False)
class ManyQuestions:
    """A producer that offers `count` questions to one thread and collects the outcomes."""

    def __init__(self) -> None:
        self.questions: list[ThreadInterrupt] = []

    @workflow.run
    async def run(self, input: Questions) -> list[dict[str, Any]]:
        for i in range(input.count):
            question = await offer_in_thread(
                input.thread_id,
                message=f"Question {i}?",
                thread_task_queue=input.thread_task_queue,
            )
            self.questions.append(question)
        outcomes = await asyncio.gather(*(q.outcome() for q in self.questions))
        return [
            {
                "status": o.status,
                "metadata": o.metadata,
                "refused": o.refused.code if o.refused else None,
                "by": [o.principal, o.via],
            }
            for o in outcomes
        ]

    @workflow.query
    def settled(self) -> int:
        return len(settled_box()) if self.questions else 0


async def test_offers_are_delivered_in_batches_and_a_full_thread_refuses_more(
    limited: Limited, client: Client, thread_id: str
):
    queue = f"owners-{uuid.uuid4().hex[:8]}"
    async with Worker(
        client,
        task_queue=queue,
        workflows=[ManyQuestions],
        workflow_runner=UnsandboxedWorkflowRunner(),
    ):
        owner = await client.start_workflow(
            ManyQuestions.run,
            Questions(thread_id=thread_id, count=7, thread_task_queue=limited.settings.task_queue),
            id=f"many-{uuid.uuid4().hex[:8]}",
            task_queue=queue,
        )
        await until(client, thread_id, lambda s: len(s.interrupts) == 5)
        async with asyncio.timeout(60):  # the two beyond max_pending_interrupts: refused at once
            while await owner.query(ManyQuestions.settled) < 2:
                await asyncio.sleep(0.05)
        first = await run(limited.http, thread_id, agent="inbox")
        batch = interrupts(first)
        assert [i["message"] for i in batch] == ["Question 0?", "Question 1?", "Question 2?"]
        second = interrupts(await run(limited.http, thread_id, agent="inbox", resume=[
            cancel(i) for i in batch
        ]))  # fmt: skip
        assert [i["message"] for i in second] == ["Question 3?", "Question 4?"]
        done = await run(limited.http, thread_id, agent="inbox", resume=[cancel(i) for i in second])
        assert finished(done)["outcome"] == {"type": "success"}
        outcomes = await owner.result()
    assert [o["status"] for o in outcomes] == ["cancelled"] * 7
    assert [(o["metadata"], o["refused"]) for o in outcomes[:5]] == [(None, None)] * 5
    assert [o["by"] for o in outcomes[:5]] == [["anonymous", "chat"]] * 5  # cancelled by a client
    for refused in outcomes[5:]:  # under the server's own key, none in AG-UI's reserved one
        assert refused["refused"] == "LIMIT_EXCEEDED"
        assert refused["by"] == [None, None]  # the thread refused it: no person
        assert list(refused["metadata"]) == [REFUSED_METADATA_KEY]
        assert refused["metadata"][REFUSED_METADATA_KEY]["code"] == "LIMIT_EXCEEDED"
