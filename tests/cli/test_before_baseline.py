"""A `.data/` from before 0.1.0 meets one sentence, never a wall of replay failures: `ag-ui-temporal
dev` on it exits 2 saying how many workflows are parked there and what to do; the worker says
so once, as a warning, and leaves them alone. Through a real dev server on the directory,
holding a workflow that recorded a patch generation's marker first, as every thread and
chain of the code before 0.1.0 did (`patches.BEFORE_BASELINE`)."""

from __future__ import annotations

import asyncio
import logging
import signal
import subprocess
from pathlib import Path

import pytest
from temporalio import workflow
from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from ag_ui_temporal.cli.dev_server import server_command
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.temporal_client import connect
from ag_ui_temporal.worker import parked_before_baseline, say_parked
from tests.cli.test_dev_owner import dev_settings
from tests.cli.test_dev_stop import BIN, HANG_GUARD, dev_env
from tests.conftest import free_port

SENTENCE = (
    "ag-ui-temporal dev: .data/ holds 1 workflow parked before ag-ui-temporal 0.1.0, which this "
    "version cannot resume: move it aside (mv .data .data.pre-0.1.0) and run again"
)


@workflow.defn(name="ParkedBeforeTheBaseline")
class ParkedBefore:
    @workflow.run
    async def run(self) -> None:
        workflow.patched("patches-2026-12-02b")  # what such a thread recorded in its first task
        await workflow.wait_condition(lambda: False)


async def _up(settings: Settings) -> Client:
    async with asyncio.timeout(HANG_GUARD):
        while True:
            try:
                client = await connect(settings)
                await client.service_client.check_health()
                return client
            except Exception:  # not up yet
                await asyncio.sleep(0.2)


async def test_a_data_directory_from_before_the_baseline_gets_one_sentence(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    settings = dev_settings(tmp_path / ".data")
    settings = settings.model_copy(update={"temporal_address": settings.dev_server_address})
    settings.data_dir.mkdir(parents=True)
    server = await asyncio.create_subprocess_exec(
        *server_command(settings), stdout=subprocess.DEVNULL, start_new_session=True
    )
    try:
        client = await _up(settings)
        assert await parked_before_baseline(client) == 0  # a fresh directory
        async with Worker(
            client, task_queue="parked", workflows=[ParkedBefore],
            workflow_runner=UnsandboxedWorkflowRunner(),
        ):  # fmt: skip
            await client.start_workflow(ParkedBefore.run, id="t-parked", task_queue="parked")
            async with asyncio.timeout(HANG_GUARD):  # visibility is written after the task
                while await parked_before_baseline(client) == 0:
                    await asyncio.sleep(0.1)
        with caplog.at_level(logging.WARNING, logger="ag-ui-temporal"):
            await say_parked(client, settings)  # as the worker does once it connects
        [warned] = [r for r in caplog.records if r.name == "ag-ui-temporal"]  # once
        assert warned.levelno == logging.WARNING
        assert "holds 1 workflow parked before ag-ui-temporal 0.1.0" in warned.getMessage()
    finally:
        server.send_signal(signal.SIGTERM)
        await asyncio.wait_for(server.wait(), HANG_GUARD)

    env = dev_env(
        GATEWAY_PORT=free_port(), DEV_SERVER_ADDRESS=settings.dev_server_address,
        DEV_SERVER_UI_PORT=settings.dev_server_ui_port,
    )  # fmt: skip
    dev = await asyncio.create_subprocess_exec(
        BIN / "ag-ui-temporal", "dev", cwd=tmp_path, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    _, err = await asyncio.wait_for(dev.communicate(), HANG_GUARD)
    said = err.decode()
    assert dev.returncode == 2, said
    assert said.strip().splitlines()[-1] == SENTENCE, said
    assert "Traceback" not in said and "nondetermin" not in said.lower()
