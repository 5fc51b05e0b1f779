"""What a join (`GET /agents/{agent}?runId=`) makes the gateway send: the thread's window,
not its archive, however often it is asked; and joins count against `MAX_RUNS_PER_MINUTE`
(429 JSON before any stream), so one principal cannot multiply a large snapshot."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from ag_ui_temporal.settings import Settings, sqlite_url
from ag_ui_temporal.worker import build_worker
from ag_ui_temporal.workflows.contract import THREAD_WINDOW_BYTES
from tests.agui import STREAMS, new_id, parse_sse, run, user
from tests.conftest import serve_gateway
from tests.gateway.conftest import archiving_stack

TEXT = 90_000
"""Characters of each message (under `MAX_STRING_LENGTH`): 14 of them pass the window 4 times."""
RUNS_A_MINUTE = 3


@pytest.fixture(scope="module")
async def archiving_url(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor, tmp_path_factory
) -> AsyncIterator[str]:
    store = sqlite_url(tmp_path_factory.mktemp("joins") / "store.sqlite3")
    async with archiving_stack(
        store, client, data_dir, executor, prefix="joins", history_limit=8_000
    ) as stack:
        yield stack.url


def snapshot(events: list[dict[str, Any]]) -> dict[str, Any]:
    return next(e for e in events if e["type"] == "MESSAGES_SNAPSHOT")


async def test_a_join_of_a_finished_run_on_a_large_thread_sends_the_window(archiving_url: str):
    thread_id = new_id("large")
    async with httpx.AsyncClient(base_url=archiving_url, timeout=60) as http:
        for n in range(14):
            events = await run(http, thread_id, text=f"{n} " + "x" * TEXT)
        run_id = events[0]["runId"]
        whole = snapshot(events)["messages"]  # the run's own: the archive's newest too
        joins = [
            await http.get("/agents/assistant", params={"runId": run_id, "offset": "-1"}),
            await http.get("/agents/assistant", params={"runId": run_id, "threadId": thread_id}),
        ]
        window = (await http.get("/agents/assistant", params={"threadId": thread_id})).json()
    assert len(whole) == 28 and len(str(whole)) > 4 * THREAD_WINDOW_BYTES
    for joined in joins:
        assert joined.status_code == 200, joined.text[:300]
        assert len(joined.content) < THREAD_WINDOW_BYTES + (16 << 10)  # the window and events
        events = parse_sse(joined.text)
        STREAMS.append(events)
        assert events[0]["runId"] == run_id and events[-1]["type"] == "RUN_FINISHED"
        # what hydrate showed (its first page is the window): the client stays consistent
        ids = [m["id"] for m in snapshot(events)["messages"]]
        assert ids == [m["id"] for m in window["messages"]] == [m["id"] for m in whole[-len(ids) :]]
        assert window["page"]["truncated"]  # and the rest is a `before` page away


@pytest.fixture(scope="module")
async def quota_url(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[str]:
    name = f"join-quota-{uuid.uuid4().hex[:8]}"
    settings = Settings(
        data_dir=data_dir / name, task_queue=name, max_runs_per_minute=RUNS_A_MINUTE
    )
    async with build_worker(client, settings, executor), serve_gateway(settings, client) as url:
        yield url


async def test_joins_count_against_the_runs_a_minute(quota_url: str, thread_id: str):
    alice = {"X-Principal": f"alice-{uuid.uuid4().hex[:6]}"}
    async with httpx.AsyncClient(base_url=quota_url, timeout=30) as http:
        first = await run(http, thread_id, text="hello", principal=alice["X-Principal"])
        run_id = first[0]["runId"]
        join = {"runId": run_id, "threadId": thread_id}
        unknown = {"runId": "no-such-run", "offset": "-1"}
        assert (await http.get("/agents/assistant", params=join, headers=alice)).status_code == 200
        assert (
            await http.get("/agents/assistant", params=unknown, headers=alice)
        ).status_code == 404
        refused = await http.get("/agents/assistant", params=join, headers=alice)
        assert refused.status_code == 429
        assert refused.headers["content-type"] == "application/json"
        assert "MAX_RUNS_PER_MINUTE" in refused.json()["detail"]
        assert int(refused.headers["retry-after"]) >= 1
        # a run of alice's is refused as well: one budget; another principal has its own
        body = {"threadId": thread_id, "runId": new_id(), "messages": [user("hi")]}
        again = await http.post("/agents/assistant", json=body, headers=alice)
        assert again.status_code == 429
        bob = {"X-Principal": f"bob-{uuid.uuid4().hex[:6]}"}
        assert (await http.get("/agents/assistant", params=unknown, headers=bob)).status_code == 404
