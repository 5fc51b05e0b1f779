"""The worker as a real process (`ag-ui-temporal worker`) against the test Temporal server:
its health endpoint, and SIGTERM during an activity: readiness flips first, the activity
finishes, the process exits 0. A stop never waits for good on an activity that ignores its
cancellation."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import sys
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from ag_ui_temporal.settings import sqlite_url
from ag_ui_temporal.store.migrate import upgrade
from ag_ui_temporal.worker_health import WorkerHealth, run_until_stopped
from ag_ui_temporal.workflows.thread.tool_calls import ToolCallInput, ToolCallOutput
from tests.conftest import DEMO, free_port
from tests.effects import EffectLog

BIN = Path(sys.executable).parent


@workflow.defn(sandboxed=False)
class SendOneEmail:
    """Runs the real worker's `sendEmail` activity on the worker's task queue."""

    @workflow.run
    async def run(self, queue: str, key: str) -> ToolCallOutput:
        call = ToolCallInput(key=key, tool="sendEmail", args={"to": "a@x.io", "subject": "hi"})
        return await workflow.execute_activity(
            "sendEmail", call, task_queue=queue, result_type=ToolCallOutput,
            start_to_close_timeout=timedelta(seconds=60),
        )  # fmt: skip


async def wait_for(check, seconds: float = 120) -> None:
    """Until `check()` holds: a liveness bound, not a speed claim (a worker process imports
    for seconds, and many more on a loaded 2-core machine running three test workers)."""
    try:
        async with asyncio.timeout(seconds):
            while not await check():
                await asyncio.sleep(0.05)
    except TimeoutError:
        raise AssertionError("condition not reached in time") from None


async def status(http: httpx.AsyncClient, path: str) -> int:
    try:
        return (await http.get(path)).status_code
    except httpx.TransportError:
        return 0


async def test_sigterm_drains_a_running_activity_then_exits_0(
    temporal_env: WorkflowEnvironment, client: Client, tmp_path: Path
):
    queue, port = f"proc-{uuid.uuid4().hex[:8]}", free_port()
    store = tmp_path / "store.sqlite3"
    await upgrade(sqlite_url(store))
    env = {
        **os.environ,
        "TEMPORAL_ADDRESS": client.service_client.config.target_host,
        "TASK_QUEUE": queue,
        "DATA_DIR": str(tmp_path),
        "DATABASE_URL": sqlite_url(store),
        "WORKER_HEALTH_PORT": str(port),
        "WORKER_GRACEFUL_SHUTDOWN_TIMEOUT": "30s",
        "WORKER_MAX_CACHED_WORKFLOWS": "50",
        "AGENT_MODULES": json.dumps([DEMO]),  # the demo's `sendEmail`
    }
    outbox = EffectLog(sqlite_url(store))
    process = await asyncio.create_subprocess_exec(
        str(BIN / "ag-ui-temporal"), "worker", env=env, cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    lock = sqlite3.connect(store, isolation_level=None)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as http:
            await wait_for(lambda: _is(http, "/readyz", 200))
            assert (await http.get("/livez")).json()["live"] is True
            assert (await http.get("/nope")).status_code == 404

            # The activity blocks on the outbox's write lock, held here: it is mid-flight.
            lock.execute("BEGIN EXCLUSIVE")
            driver_queue = f"{queue}-driver"
            async with Worker(
                client, task_queue=driver_queue, workflows=[SendOneEmail],
                workflow_runner=UnsandboxedWorkflowRunner(),
            ):  # fmt: skip
                handle = await client.start_workflow(
                    SendOneEmail.run, args=[queue, "drain-1"], id=f"drain-{queue}",
                    task_queue=driver_queue,
                )  # fmt: skip

                async def activity_started() -> bool:
                    pending = (await handle.describe()).raw_description.pending_activities
                    return any(a.attempt >= 1 and a.HasField("last_started_time") for a in pending)

                await wait_for(activity_started)
                process.send_signal(signal.SIGTERM)
                await wait_for(lambda: _is(http, "/readyz", 503))  # readiness flips first
                body = (await http.get("/readyz")).json()
                assert body["draining"] is True
                assert (await http.get("/livez")).status_code == 200
                assert process.returncode is None  # still draining: the activity runs

                lock.execute("COMMIT")  # the activity can finish now
                result = await handle.result()
            assert result.first_time is True
            code = await asyncio.wait_for(process.wait(), 30)
            assert process.stdout is not None
            output = (await process.stdout.read()).decode()
            assert code == 0, output
    finally:
        lock.close()
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert "draining" in output, output
    assert [e["key"] for e in outbox.effects()] == ["drain-1"]


async def _is(http: httpx.AsyncClient, path: str, code: int) -> bool:
    return await status(http, path) == code


RELEASED = asyncio.Event()
STARTED = asyncio.Event()


@activity.defn(name="stubborn")
async def stubborn() -> None:
    """Ignores its cancellation (as a sync activity in a thread must) until the test lets go."""
    STARTED.set()
    while not RELEASED.is_set():
        try:
            await RELEASED.wait()
        except asyncio.CancelledError:
            continue


@workflow.defn(sandboxed=False)
class RunsStubborn:
    @workflow.run
    async def run(self) -> None:
        await workflow.execute_activity(stubborn, start_to_close_timeout=timedelta(minutes=5))


async def test_a_stop_leaves_a_worker_stuck_past_its_drain(
    client: Client, caplog: pytest.LogCaptureFixture
):
    queue = f"stubborn-{uuid.uuid4().hex[:8]}"
    worker = Worker(
        client, task_queue=queue, workflows=[RunsStubborn], activities=[stubborn],
        workflow_runner=UnsandboxedWorkflowRunner(),
    )  # fmt: skip
    stop = asyncio.Event()
    # a short grace: what is proven is that the stop ends, not how long the grace is
    stopping = asyncio.create_task(run_until_stopped(worker, stop, drain=0.5, grace=0.5))
    handle = await client.start_workflow(RunsStubborn.run, id=queue, task_queue=queue)
    try:
        await asyncio.wait_for(STARTED.wait(), 60)
        stop.set()
        # Temporal waits for the activity for good; the stop does not (a hang guard)
        await asyncio.wait_for(stopping, 60)
        assert not worker.is_shutdown
        assert "still stopping" in caplog.text
    finally:
        RELEASED.set()
        await asyncio.wait_for(worker.shutdown(), 60)
        await handle.terminate()


async def test_a_running_worker_whose_loop_lagged_is_not_ready(client: Client):
    """Building a worker blocks the loop (imports, the sandbox's checks): until the lag is
    measured back under its bound, the worker is neither live nor ready."""
    health = WorkerHealth(max_lag=0.3, tick=0.5)  # a lag, once measured, stays for a tick
    async with health.serving("127.0.0.1", None):
        queue = f"lag-{uuid.uuid4().hex[:8]}"
        async with Worker(client, task_queue=queue, activities=[stubborn]) as worker:
            health.worker = worker
            await wait_for(lambda: _holds(health.ready))
            time.sleep(1)  # noqa: ASYNC251 - the loop blocked, as a worker's build blocks it
            await wait_for(lambda: _holds(lambda: not health.live()))
            assert not health.ready()
            await wait_for(lambda: _holds(health.ready))
            assert health.live()


async def _holds(check: Callable[[], bool]) -> bool:
    return check()
