"""Threads that outgrow their workflow: the window, the transcript archive, the limits.

On SQLite and on a real PostgreSQL, each engine's tests sharing a worker and a gateway on a
store of their own (each test on threads of its own): a thread takes 30 MB of transcript
over 30 runs, continues as new along the way, answers every run, hydrates its newest page at
once and pages back to its first message, and never sends Temporal a payload over the
budget (the test prints the largest).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from ag_ui_temporal.workflows.contract import (
    MAX_MESSAGE_BYTES,
    RUN_UPDATE,
    THREAD_WINDOW_BYTES,
    ErrorCode,
    RunRequest,
    RunResult,
    run_digest,
    run_update_id,
    thread_workflow_id,
)
from tests.agui import STREAMS, new_id, parse_sse, thread_state, user
from tests.conftest import histories, new_database
from tests.gateway.conftest import ArchivingStack, archiving_stack

RUNS = 30
PER_RUN = 10
"""Messages of each run: ten of `TEXT` are the most one request carries (`MAX_BODY_BYTES`,
1 MiB), so the 30 MB come in as few runs (and workflow tasks) as a client can send them."""
TEXT = 100_000
"""Characters of each message: `MAX_STRING_LENGTH`, the most a message may hold."""
PAYLOAD_BUDGET = 2 * THREAD_WINDOW_BYTES
"""The most any payload the workflow sends may weigh (the window, the event log's tail)."""


Archive = ArchivingStack


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def archive(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    client: Client,
    data_dir: Path,
    executor: ThreadPoolExecutor,
) -> AsyncIterator[ArchivingStack]:
    """The engine's stack, for the module's tests (each uses threads of its own)."""
    url = new_database(request, request.param, tmp_path_factory.mktemp("archive"))
    async with archiving_stack(
        url, client, data_dir, executor, prefix="archive", history_limit=120
    ) as built:
        yield built


async def post(
    http: httpx.AsyncClient, thread_id: str, messages: list[dict[str, Any]], run_id: str = ""
) -> Any:
    body = {"threadId": thread_id, "runId": run_id or new_id(), "messages": messages}
    response = await http.post("/agents/assistant", json=body)
    assert response.status_code == 200, response.text[:300]
    return parse_sse(response.text)


async def test_a_thread_takes_30_mb_and_keeps_answering(archive: Archive) -> None:
    thread_id, sent, started = new_id("big"), [], time.monotonic()
    first_run = new_id()
    async with httpx.AsyncClient(base_url=archive.url, timeout=60) as http:
        for n in range(RUNS):
            messages = [user(f"{n}.{i} " + "x" * (TEXT - 8)) for i in range(PER_RUN)]
            sent += [m["id"] for m in messages]
            events = await post(http, thread_id, messages, first_run if n == 0 else "")
            assert events[-1]["type"] == "RUN_FINISHED", (n, events[-1])
            snapshot = next(e for e in events if e["type"] == "MESSAGES_SNAPSHOT")
            assert snapshot["messages"][-1]["role"] == "assistant"
            assert "ag-ui:snapshot" not in snapshot
        STREAMS.append(events)  # the last (an expanded snapshot) is checked by @ag-ui/core
        elapsed = time.monotonic() - started
        transcript = await _hydrated(http, thread_id)
        joined = await _joined(http, thread_id, first_run)
    assert joined[0] == {**joined[0], "type": "RUN_STARTED", "runId": first_run}
    assert joined[-1]["type"] == "RUN_FINISHED"  # the first run left the log: the archive
    users = [m["id"] for m in transcript if m["role"] == "user"]
    assert users == sent and len(transcript) == RUNS * (PER_RUN + 1)
    largest, runs = await _largest_payload(archive.client, thread_id)
    print(
        f"\n30 MB over {RUNS} runs in {elapsed:.1f}s: {runs} workflow runs (continue-as-new), "
        f"largest payload the workflow sent {largest} bytes (budget {PAYLOAD_BUDGET})"
    )
    assert runs > 1 and largest < PAYLOAD_BUDGET


async def _hydrated(http: httpx.AsyncClient, thread_id: str) -> list[dict[str, Any]]:
    """The whole transcript through hydrate: the newest page, then `before` pages."""
    params: dict[str, Any] = {"threadId": thread_id}
    page = (await http.get("/agents/assistant", params=params)).json()
    assert page["page"]["cursor"] and 0 < len(page["messages"]) < 10  # the window only
    messages = page["messages"]
    while page["page"]["truncated"]:
        before = {**params, "limit": 1000, "before": page["page"]["cursor"]}
        page = (await http.get("/agents/assistant", params=before)).json()
        messages = page["messages"] + messages
    return list(messages)


async def _joined(http: httpx.AsyncClient, thread_id: str, run_id: str) -> list[dict[str, Any]]:
    params: dict[str, Any] = {"threadId": thread_id, "runId": run_id, "offset": -1}
    response = await http.get("/agents/assistant", params=params)
    assert response.status_code == 200, response.text
    return parse_sse(response.text)


async def _largest_payload(client: Client, thread_id: str) -> tuple[int, int]:
    """The largest payload the thread's workflow sent (update results, activity inputs,
    continue-as-new input), over all its runs; and how many runs it had."""
    runs = await histories(client, thread_id)
    return max(_sent_bytes(event) for history in runs for event in history.events), len(runs)


def _sent_bytes(event: HistoryEvent) -> int:
    if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
        return event.workflow_execution_update_completed_event_attributes.outcome.ByteSize()
    if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        return event.activity_task_scheduled_event_attributes.input.ByteSize()
    if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
        return event.workflow_execution_continued_as_new_event_attributes.input.ByteSize()
    return 0


def _big(text: str = "é" * 99_000) -> dict[str, Any]:
    """A message within `MAX_STRING_LENGTH` characters but over `MAX_MESSAGE_BYTES` bytes."""
    message = user(text)
    assert len(text.encode()) > MAX_MESSAGE_BYTES
    return message


async def test_a_message_the_thread_cannot_store_is_refused(archive: Archive) -> None:
    thread_id = new_id("limits")
    async with httpx.AsyncClient(base_url=archive.url, timeout=30) as http:
        await post(http, thread_id, [user("hello")])
        body = {"threadId": thread_id, "runId": new_id(), "messages": [_big()]}
        response = await http.post("/agents/assistant", json=body)
        assert response.status_code == 422 and "MAX_MESSAGE_BYTES" in response.text
        before = await thread_state(archive.client, thread_id)
        # a caller that bypasses the gateway gets the run's refusal, and nothing changes
        handle = archive.client.get_workflow_handle(thread_workflow_id(thread_id))
        run_id = new_id()
        request = RunRequest(
            thread_id=thread_id, run_id=run_id, agent="assistant", principal="anonymous"
        )
        request.messages = [_big()]
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await handle.execute_update(
                RUN_UPDATE,
                request,
                id=run_update_id(run_id, run_digest(request)),
                result_type=RunResult,
            )
        assert isinstance(refused.value.cause, ApplicationError)
        assert refused.value.cause.type == ErrorCode.LIMIT_EXCEEDED
        assert await thread_state(archive.client, thread_id) == before
        events = await post(http, thread_id, [user("still there?")])
        assert events[-1]["type"] == "RUN_FINISHED"


@pytest.fixture
def forged() -> Iterator[list[str]]:
    yield ["abc", "p0", "p-1", "p99999", "p01", "1e3", "é", "p" + "9" * 40]


async def test_hydrate_refuses_a_forged_cursor(archive: Archive, forged: list[str]) -> None:
    thread_id = new_id("cursor")
    async with httpx.AsyncClient(base_url=archive.url, timeout=30) as http:
        await post(http, thread_id, [user("hello")])
        for cursor in forged:
            params = {"threadId": thread_id, "before": cursor}
            response = await http.get("/agents/assistant", params=params)
            assert response.status_code in (400, 422), (cursor, response.text)


async def test_a_re_sent_transcript_adds_nothing_once_archived(archive: Archive) -> None:
    """TanStack re-sends the whole transcript: messages the window no longer holds are not
    taken as new; an archived message sent alone as new is kept under a derived id."""
    thread_id, history = new_id("resend"), []
    async with httpx.AsyncClient(base_url=archive.url, timeout=30) as http:
        for n in range(4):  # over the window: the first messages are archived
            history.append(user(f"{n} " + "x" * (TEXT - 8)))
            await post(http, thread_id, [history[-1]])
        assert (await thread_state(archive.client, thread_id)).archived > 0
        await post(http, thread_id, [*history, user("and one more")])
        events = await post(http, thread_id, [history[0]])  # an archived message, alone
        assert events[-1]["type"] == "RUN_FINISHED"
        for n in range(3):  # ... until it is archived too
            events = await post(http, thread_id, [user(f"after {n} " + "x" * (TEXT - 16))])
            assert events[-1]["type"] == "RUN_FINISHED"
        transcript = await _hydrated(http, thread_id)
    ids = [m["id"] for m in transcript if m["role"] == "user"]
    first = history[0]["id"]
    assert ids[:4] == [m["id"] for m in history] and len(ids) == 9
    assert ids[5].startswith(f"{first}~")
