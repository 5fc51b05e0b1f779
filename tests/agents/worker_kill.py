"""A worker process killed while an agent waits (each framework's test of it): two `ag-ui-temporal
worker` processes serve the agent, the one that ran the thread's tasks is SIGKILLed, and the
other, which never ran a task of the thread, takes the answer."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr
from temporalio.client import Client

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import thread_workflow_id
from tests.agui import finished, interrupts, resolve, run
from tests.conftest import TLS, free_port, serve_gateway


async def approved_after_a_kill(
    client: Client,
    tmp_path: Path,
    own_store: SecretStr,
    thread_id: str,
    *,
    agent: str,
    module: str,
    ask: str,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Two `ag-ui-temporal worker` processes serving `module`: `agent` asks (`ask`), every
    workflow task of the thread on the one that took its first; that one is SIGKILLed; the
    approval goes to the other, which never ran a task of the thread and ends the run (it is
    the only one alive). Returns the interrupt and the resume's events."""
    queue = f"{agent}-kill-{uuid.uuid4().hex[:8]}"
    settings = Settings(
        data_dir=tmp_path, task_queue=queue, database_url=own_store, agent_modules=[module]
    )
    env = worker_env(client, settings, [module])
    async with (
        serve_gateway(settings, client) as url,
        httpx.AsyncClient(base_url=url, timeout=90) as http,
        worker_processes(env, tmp_path / "one.log", tmp_path / "two.log") as workers,
    ):
        [asked] = interrupts(await run(http, thread_id, agent=agent, text=ask))
        before = await task_workers(client, thread_id)
        [killed] = [w for w in workers if identity(w) == before[0]]
        assert set(before) == {identity(killed)}, (before, [identity(w) for w in workers])
        [second] = [w for w in workers if w is not killed]
        killed.send_signal(signal.SIGKILL)
        assert await killed.wait() == -signal.SIGKILL
        done = await run(http, thread_id, agent=agent, resume=[resolve(asked, {"approved": True})])
    assert finished(done)["outcome"] == {"type": "success"}, done[-1]
    after = (await task_workers(client, thread_id))[len(before) :]
    assert identity(second) in after, (before, after, identity(second))
    return asked, done


def worker_env(client: Client, settings: Settings, modules: list[str]) -> dict[str, str]:
    """The environment of `ag-ui-temporal worker` processes serving `modules` on `settings`'
    queue, data folder and store: quick to drain, quick to give up a killed one's tasks."""
    assert settings.database_url is not None
    return {
        **os.environ,
        "TEMPORAL_ADDRESS": client.service_client.config.target_host,
        "TASK_QUEUE": settings.task_queue,
        "DATA_DIR": str(settings.data_dir),
        "DATABASE_URL": settings.database_url.get_secret_value(),
        "AGENT_MODULES": json.dumps(modules),
        "WORKER_GRACEFUL_SHUTDOWN_TIMEOUT": "1s",
        # the killed worker's sticky queue holds the resume's task this long, then any takes it
        "WORKER_STICKY_QUEUE_TIMEOUT": "2s",
    }


def identity(process: asyncio.subprocess.Process) -> str:
    """The Temporal identity a worker process has by default (its client's)."""
    return f"{process.pid}@{socket.gethostname()}"


async def task_workers(client: Client, thread_id: str) -> list[str]:
    """Who ran each of the thread's workflow tasks, in order (the thread does not continue
    as new in these tests)."""
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    return [
        event.workflow_task_started_event_attributes.identity
        async for event in handle.fetch_history_events()
        if event.HasField("workflow_task_started_event_attributes")
    ]


@asynccontextmanager
async def worker_processes(
    env: dict[str, str], *logs: Path
) -> AsyncIterator[list[asyncio.subprocess.Process]]:
    """`ag-ui-temporal worker` processes, one per log, started side by side, once each polls
    (its readiness probe says so); those still running are stopped when the block ends."""
    started: list[tuple[asyncio.subprocess.Process, int, Path]] = []
    try:
        for log in logs:
            port = free_port()
            with log.open("wb") as out:  # the process writes to its own copy of the descriptor
                process = await asyncio.create_subprocess_exec(
                    str(Path(sys.executable).parent / "ag-ui-temporal"),
                    "worker",
                    env={**env, "WORKER_HEALTH_PORT": str(port)},
                    cwd=log.parent,
                    stdout=out,
                    stderr=asyncio.subprocess.STDOUT,
                )
            started.append((process, port, log))
        await asyncio.gather(*(_ready(*each) for each in started))
        yield [process for process, _, _ in started]
    finally:
        for process, _, _ in started:
            if process.returncode is None:
                process.terminate()
                await process.wait()


async def _ready(process: asyncio.subprocess.Process, port: int, log: Path) -> None:
    async def ready() -> bool:
        async with httpx.AsyncClient(timeout=5, verify=TLS) as http:
            try:
                return (await http.get(f"http://127.0.0.1:{port}/readyz")).status_code == 200
            except httpx.TransportError:
                return False

    for _ in range(1200):  # importing LangGraph on a loaded machine takes a while
        if process.returncode is not None:
            raise AssertionError(f"the worker exited {process.returncode}: {log.read_text()}")
        if await ready():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the worker never got ready: {log.read_text()[-3000:]}")
