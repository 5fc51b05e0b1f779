"""Idempotent replay (AG-UI rule 5) of a resume whose run the thread let go long ago.

A thread keeps the interrupts and events of its last 20 runs; at continue-as-new older
ones go to the store's archive. A repeat of an old resume is answered from there exactly
as a repeat of a recent one is answered by the thread: the same events under the new run
id, the same refusals. Each test runs a worker and a gateway of its own on a store of its
own, on SQLite and on a real PostgreSQL.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from pydantic_ai.durable_exec.temporal import PydanticAIPlugin
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from ag_ui_temporal.settings import sqlite_url
from ag_ui_temporal.temporal_client import DATA_CONVERTER
from ag_ui_temporal.worker_plugin import SANDBOX
from ag_ui_temporal.workflows.contract.replay import ARCHIVE_INTERRUPTS_ACTIVITY, readdressed
from ag_ui_temporal.workflows.thread.workflow import ThreadWorkflow
from tests.agui import (
    STREAMS,
    Frame,
    error,
    interrupts,
    new_id,
    parse_frame,
    resolve,
    run,
    run_body,
    thread_state,
)
from tests.conftest import histories, serve_gateway
from tests.effects import EffectLog
from tests.gateway.conftest import ArchivingStack, archiving_stack

EMAIL = "Send an email to ada@example.com saying hi"
MOST_RUNS = 60
"""Runs a test drives at most to push a run out of the thread (20 are kept)."""


Stack = ArchivingStack


@pytest.fixture
async def stack(
    store_url: str, client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[ArchivingStack]:
    async with archiving_stack(
        store_url, client, data_dir, executor, prefix="replay", history_limit=60
    ) as built:
        yield built


async def let_go(http: httpx.AsyncClient, stack: Stack, thread_id: str, run_id: str) -> int:
    """Run until the thread no longer holds run `run_id` (nor its interrupts); how many runs."""
    for n in range(1, MOST_RUNS + 1):
        await run(http, thread_id, text=f"hello {n}")
        state = await thread_state(stack.client, thread_id)
        if all(r.run_id != run_id for r in state.runs) and all(
            i.resolved_by_run != run_id for i in state.interrupts
        ):
            return n
    raise AssertionError(f"the thread still holds {run_id} after {MOST_RUNS} runs")


async def resumed(
    http: httpx.AsyncClient, body: dict[str, Any], last_event_id: str | None = None
) -> list[Frame]:
    """A resume's SSE frames as sent (`id:` included), from the start or `last_event_id`."""
    headers = {"Last-Event-ID": last_event_id} if last_event_id is not None else None
    response = await http.post("/agents/assistant", json=body, headers=headers)
    assert response.status_code == 200, response.text
    sent = [parse_frame(raw) for raw in response.text.replace("\r\n", "\n").split("\n\n")]
    sent = [frame for frame in sent if frame.data is not None]
    if last_event_id is None:  # a whole stream, for the session's `@ag-ui/core` check
        STREAMS.append([frame.event for frame in sent])
    return sent


def comparable(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A replay's events under one run id, without the transcript (it grew meanwhile)."""
    readdressed_events = readdressed(events, "replayed", "parent")
    return [e for e in readdressed_events if e["type"] != "MESSAGES_SNAPSHOT"]


def transcript(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return next(e["messages"] for e in events if e["type"] == "MESSAGES_SNAPSHOT")


async def test_a_repeated_resume_of_any_earlier_run_gets_its_outcome(stack: Stack):
    thread_id = new_id("old-resume")
    async with httpx.AsyncClient(base_url=stack.url, timeout=60) as http:
        asked = await run(http, thread_id, text=EMAIL)
        [pending] = interrupts(asked)
        answer = [resolve(pending, {"approved": True})]
        other = [resolve(pending, {"approved": False})]
        done = await run(http, thread_id, resume=answer, parent_run_id=asked[0]["runId"])
        # what a repeat gets while the thread holds the run: the baseline
        recent_frames = await resumed(http, run_body(thread_id, resume=answer))
        recent = [frame.event for frame in recent_frames]
        recent_other = error(await run(http, thread_id, resume=other))
        recent_stranger = error(await run(http, thread_id, resume=answer, principal="mallory"))
        runs = await let_go(http, stack, thread_id, done[0]["runId"])
        before = await thread_state(stack.client, thread_id)
        assert before.interrupts == []  # the thread no longer knows the interrupt
        body = run_body(thread_id, resume=answer, parentRunId="p")
        again_frames = await resumed(http, body)
        again = [frame.event for frame in again_frames]
        after = await thread_state(stack.client, thread_id)  # nothing re-applied, no run added
        assert (after.messages, after.state, after.interrupts) == (
            before.messages,
            before.state,
            [],
        )
        assert {r.run_id for r in after.runs} <= {r.run_id for r in before.runs}  # (trimmed)
        assert {e.get("runId", body["runId"]) for e in again} == {body["runId"]}
        assert again[0]["parentRunId"] == "p"
        assert comparable(again) == comparable(recent)
        assert [f.id for f in again_frames] == [f.id for f in recent_frames]  # the same offsets
        assert transcript(again)[: len(transcript(recent))] == transcript(recent)
        rejoined = await resumed(http, body, last_event_id=again_frames[1].id)  # re-attached
        assert [f.id for f in rejoined] == [f.id for f in again_frames[2:]]
        assert error(await run(http, thread_id, resume=other)) == recent_other
        stranger = error(await run(http, thread_id, resume=answer, principal="mallory"))
        # a stranger is told what a resume of no thread is, before the archive is read
        assert stranger["code"] == recent_stranger["code"] == "UNKNOWN_INTERRUPT_ID"
        assert stranger["message"] == recent_stranger["message"]
        unknown = error(await run(http, thread_id, resume=[resolve({"id": "int-nope"}, True)]))
        assert unknown["code"] == "UNKNOWN_INTERRUPT_ID"
    sent = EffectLog(stack.settings.store_url).effects("sendEmail")
    assert [e["key"] for e in sent] == [pending["toolCallId"]]  # once, whatever was repeated
    assert recent_other["code"] == "INTERRUPT_ALREADY_RESOLVED"
    # the interrupt left through the activity, and every workflow run replays as it ran
    recorded = await histories(stack.client, thread_id)
    assert sum(archived_interrupts(history) for history in recorded) == 1
    replayer = Replayer(
        workflows=[ThreadWorkflow],
        data_converter=DATA_CONVERTER,
        workflow_runner=SANDBOX,
        plugins=[PydanticAIPlugin()],
    )
    for history in recorded:
        await replayer.replay_workflow(history)
    print(f"\nthe resolving run left the thread after {runs} more runs")


def archived_interrupts(history: WorkflowHistory) -> int:
    """How many times the history archives interrupts (the activity scheduled)."""
    scheduled = EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    return sum(
        1
        for e in history.events
        if e.event_type == scheduled
        and e.activity_task_scheduled_event_attributes.activity_type.name
        == ARCHIVE_INTERRUPTS_ACTIVITY
    )


async def test_an_unreadable_archive_is_unavailable_not_an_error_page(stack: Stack, tmp_path: Path):
    """A gateway whose store cannot be read (here: never migrated) answers a repeat of an
    old resume with `UNAVAILABLE` (the client retries), never a 500."""
    thread_id = new_id("old-resume")
    async with httpx.AsyncClient(base_url=stack.url, timeout=60) as http:
        [pending] = interrupts(await run(http, thread_id, text=EMAIL))
        answer = [resolve(pending, {"approved": True})]
        done = await run(http, thread_id, resume=answer)
        await let_go(http, stack, thread_id, done[0]["runId"])
    broken = stack.settings.model_copy(
        update={"database_url": SecretStr(sqlite_url(tmp_path / "never-migrated.sqlite3"))}
    )
    async with serve_gateway(broken, stack.client) as url, httpx.AsyncClient(base_url=url) as http:
        refusal = error(await run(http, thread_id, resume=answer))
    assert refusal["code"] == "UNAVAILABLE", refusal
