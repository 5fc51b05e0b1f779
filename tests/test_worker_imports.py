"""No workflow task imports a module of its own: a fresh `ag-ui-temporal worker` has loaded
everything a workflow asks for before it polls, so a task's first import (the MCP stack takes
1-2 s) cannot run it past Temporal's 2 s deadlock timeout. The worker runs as a process of its
own (tests/workflow_imports.py notes what each task imported), driven through the real
gateway: a run with the client's own tools (pydantic-ai's durable layer then looks for MCP
toolsets among them), an approval, and an agent whose tools come from an MCP server. Nor does
a new workflow instance import beartype anew (an import hook of the process asks for it)."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import signal
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client
from temporalio.worker import Worker

from ag_ui_temporal.settings import Settings, sqlite_url
from ag_ui_temporal.store.migrate import upgrade
from ag_ui_temporal.worker_plugin import SANDBOX
from tests.agents.test_frontend_tools import the_call, tool_result
from tests.agui import PICK_DATE, finished, interrupts, resolve, run, texts
from tests.conftest import DEMO, free_port, serve_gateway
from tests.test_worker_process import wait_for

ROOT = Path(__file__).parents[1]
BOOKING = (
    "ag_ui_temporal.examples.agents.booking"  # an MCP server's tools (a stdio server per call)
)


async def _assistant_runs(http: httpx.AsyncClient) -> None:
    thread = f"t-{uuid.uuid4().hex[:12]}"
    call = the_call(await run(http, thread, text="Pick a date for the meeting", tools=[PICK_DATE]))
    answer = tool_result(call["toolCallId"], {"date": "2026-12-24"})
    done = await run(http, thread, messages=[answer], tools=[PICK_DATE])
    assert texts(done) == "You picked 2026-12-24."
    [asked] = interrupts(await run(http, thread, text="Send an email to ada@x.io saying hi"))
    sent = await run(http, thread, resume=[resolve(asked, {"approved": True})])
    assert finished(sent)["outcome"] == {"type": "success"}


async def _booking_runs(http: httpx.AsyncClient) -> None:
    thread = f"t-{uuid.uuid4().hex[:12]}"
    [when] = interrupts(await run(http, thread, agent="booking", text="book a table at Chez Ada"))
    assert when["reason"] == "input_required"
    answer = {"date": "2026-12-24", "party_size": 2}
    [name] = interrupts(await run(http, thread, agent="booking", resume=[resolve(when, answer)]))
    assert name["message"] == "Under which name?"


@pytest.mark.parametrize("agent_modules", [[DEMO], [BOOKING]], ids=["assistant", "mcp-agent"])
async def test_no_workflow_task_imports_a_module(
    client: Client, tmp_path: Path, agent_modules: list[str]
):
    queue, port = f"imports-{uuid.uuid4().hex[:8]}", free_port()
    store, log = sqlite_url(tmp_path / "store.sqlite3"), tmp_path / "imports.log"
    await upgrade(store)
    address = client.service_client.config.target_host
    env: dict[str, Any] = {
        **os.environ,
        "TEMPORAL_ADDRESS": address,
        "TASK_QUEUE": queue,
        "DATA_DIR": str(tmp_path),
        "DATABASE_URL": store,
        "WORKER_HEALTH_PORT": str(port),
        "AGENT_MODULES": json.dumps(agent_modules),
        "IMPORT_LOG": str(log),
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.workflow_imports", "worker", env=env, cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    settings = Settings(
        temporal_address=address, task_queue=queue, data_dir=tmp_path, agent_modules=agent_modules
    )
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as health:
            await wait_for(lambda: _ready(health), seconds=120)  # a cold start imports a lot
        async with (
            serve_gateway(settings, client) as url,
            httpx.AsyncClient(base_url=url, timeout=60) as http,
        ):
            await (_booking_runs(http) if agent_modules == [BOOKING] else _assistant_runs(http))
        process.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(process.wait(), 60)
        assert process.stdout is not None
        assert code == 0, (await process.stdout.read()).decode()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()

    imported = log.read_text().split()
    # the recorder saw the tasks: each new workflow's sandbox loads the workflow code anew
    assert "ag_ui_temporal.workflows.thread.workflow" in imported
    # only workflow code: the package's workflows and the demo's workflow-side agent
    workflow_code = ("ag_ui_temporal.workflows", "ag_ui_temporal.demo")
    strays = {name for name in imported if not name.startswith(workflow_code)}
    assert strays <= {"ag_ui_temporal"}, (
        f"imported inside a workflow task: see worker.PRELOADED_MODULES: {sorted(strays)}"
    )


async def _ready(health: httpx.AsyncClient) -> bool:
    try:
        return (await health.get("/readyz")).status_code == 200
    except httpx.TransportError:
        return False


LATE_WORKFLOW = """
from temporalio import workflow


@workflow.defn
class Late:
    @workflow.run
    async def run(self) -> str:
        return "ran"
"""


class _BeartypeRecorder:
    """Finds nothing; notes each beartype module some import asks for."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.split(".")[0] == "beartype":
            self.asked.append(name)


async def test_a_sandbox_never_imports_beartype_anew(client: Client, tmp_path: Path):
    """fastmcp's `key_value` installs beartype's import hook. A directory first searched after
    it loads through the hook, which asks `sys.modules` (inside a sandbox, the sandbox's) for its
    own state: unless the sandbox shares beartype (`worker_plugin.IMPORT_HOOK_MODULES`), each
    new workflow instance of such a module imported beartype again."""
    importlib.import_module("pydantic_ai.mcp")  # the hook, as every thread worker has it
    (tmp_path / "late_workflows").mkdir()
    (tmp_path / "late_workflows" / "__init__.py").write_text("")
    (tmp_path / "late_workflows" / "late.py").write_text(LATE_WORKFLOW)
    sys.path.insert(0, str(tmp_path))
    recorder = _BeartypeRecorder()
    try:
        module = importlib.import_module("late_workflows.late")
        assert type(module.__loader__).__module__.startswith("beartype.")  # loaded through it
        sys.meta_path.insert(0, recorder)
        queue = f"late-{uuid.uuid4().hex[:8]}"
        async with Worker(
            client, task_queue=queue, workflows=[module.Late], workflow_runner=SANDBOX
        ):
            assert (
                await client.execute_workflow(module.Late.run, id=queue, task_queue=queue) == "ran"
            )
    finally:
        if recorder in sys.meta_path:
            sys.meta_path.remove(recorder)
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n.split(".")[0] == "late_workflows"]:
            del sys.modules[name]
    assert recorder.asked == []
