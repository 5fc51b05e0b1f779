"""`ag-ui-temporal dev`: the whole stack in one process.

An embedded Temporal dev server (unless `TEMPORAL_ADDRESS` is set: cli/dev_server.py) on
`DEV_SERVER_ADDRESS`, serving its Temporal UI on `DEV_SERVER_UI_PORT`, whose SQLite file
under `DATA_DIR` keeps every paused run, with the app's search attributes registered; the
store's migrations
(SQLite under `DATA_DIR` unless `DATABASE_URL` is set); then the worker, the `examples` task
queue's worker and the gateway. The demo's people (`demo/directory.yaml`) are the directory
unless `DIRECTORY_FILE` is set. Once the gateway answers, `dev` says where each thing is; a
port it cannot listen on, or a server that does not answer, stops it with the reason. With
its embedded server it owns `DATA_DIR` while it runs, and the server dies with it
(cli/dev_owner.py): whatever ended the last `dev` there, the next one starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from importlib.resources import files
from pathlib import Path

from ag_ui_temporal.cli.dev_owner import DataDirectory, owned
from ag_ui_temporal.cli.dev_server import (
    embedded_address,
    embedded_server,
    ports,
    refuse_taken,
    register_search_attributes,
    url_host,
    wait_for_temporal,
)
from ag_ui_temporal.cli.reasons import store_errors
from ag_ui_temporal.cli.serve import serve_gateway
from ag_ui_temporal.settings import SettingError, Settings, host_port

log = logging.getLogger("ag-ui-temporal")


def with_demo_directory(settings: Settings) -> Settings:
    """The demo's people as the directory, unless `DIRECTORY_FILE` names one."""
    if "directory_file" in settings.model_fields_set:
        return settings
    # a plain file of the installed package (the wheel ships it: pyproject's package-data)
    path = Path(str(files("ag_ui_temporal.demo") / "directory.yaml"))
    return settings.model_copy(update={"directory_file": path})


def where(settings: Settings, embedded: bool) -> str:
    """What `dev` says once the gateway answers: where each part of the stack is."""
    from sqlalchemy import make_url

    gateway = f"http://{url_host(settings.gateway_host)}:{settings.gateway_port}"
    built = settings.web_dist is not None and (settings.web_dist / "index.html").is_file()
    if embedded:
        host, _ = host_port(settings.dev_server_address)
        ui = f"http://{url_host(host)}:{settings.dev_server_ui_port}"
        state = settings.data_dir.resolve() / "temporal.sqlite"
        grpc = f"{settings.temporal_address}  (embedded: {state})"
    else:
        ui = "the one of the server at TEMPORAL_ADDRESS"
        grpc = f"{settings.temporal_address}  (TEMPORAL_ADDRESS: none started)"
    url = make_url(settings.store_url)
    sqlite = url.get_backend_name() == "sqlite"
    store = f"{url.database}  (SQLite)" if sqlite else url.render_as_string(hide_password=True)
    rows = {
        "web UI + AG-UI": gateway
        if built
        else f"{gateway}  (AG-UI only: `make web` builds the UI)",
        "AG-UI agents": f"{gateway}/agents/{{agent}}",
        "Temporal UI": ui,
        "Temporal gRPC": grpc,
        "store": store,
    }
    lines = [f"  {name:<16}{value}" for name, value in rows.items()]
    return "\n".join(["ag-ui-temporal dev is up (Ctrl-C stops it):", *lines])


async def say_where_once_up(settings: Settings, embedded: bool) -> None:
    """`where`, once the gateway (and the embedded Temporal UI) take connections: the last
    lines a person reads, true when read."""
    listening = [(settings.gateway_host, settings.gateway_port)]
    if embedded:
        listening.append((host_port(settings.dev_server_address)[0], settings.dev_server_ui_port))
    for host, port in listening:
        while True:
            try:
                _, writer = await asyncio.open_connection(url_host(host).strip("[]"), port)
            except OSError:  # not listening yet
                await asyncio.sleep(0.05)
                continue
            writer.close()
            break
    log.info("%s", where(settings, embedded))


async def dev(settings: Settings) -> None:
    """Embedded server (unless TEMPORAL_ADDRESS is set), worker and gateway in one process.

    Ctrl-C (or SIGTERM) stops them in the order that lets each finish: the gateway (its open
    streams get `STREAMS_DRAIN`), then the workers (their drain), then the server they
    report to. A second Ctrl-C leaves at once."""
    embedded = "temporal_address" not in settings.model_fields_set
    with owned(settings.data_dir) if embedded else contextlib.nullcontext() as directory:
        # a server a dead `dev` left on this directory is ended before the ports are looked at
        refuse_taken("dev", ports(settings, embedded))  # a taken port is said at once
        await run_stack(settings, directory)


async def run_stack(settings: Settings, directory: DataDirectory | None) -> None:
    """The stack on `directory`'s embedded server (None: `TEMPORAL_ADDRESS`'s), until stopped."""
    from ag_ui_temporal.worker_health import SIGNALS, stop_on_signals

    embedded = directory is not None
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
            server = None
            if directory is not None:
                server = await stack.enter_async_context(embedded_server(settings, directory))
                servers.append(server.process)
                address = embedded_address(settings)
                settings = settings.model_copy(update={"temporal_address": address})
            # seconds of imports (the agents, the store), while the server starts
            from ag_ui_temporal.agents.catalog import import_agent_modules
            from ag_ui_temporal.store.migrate import upgrade
            from ag_ui_temporal.worker import run_worker

            import_agent_modules(settings)  # AGENT_MODULES, LLM_MODEL: said before anything waits
            await wait_for_temporal(settings, server)
            if server is not None:
                await register_search_attributes(settings)
                await refuse_parked(settings)
            with store_errors(settings):  # the init step compose and Kubernetes run apart
                await upgrade(settings.store_url)
            workers = [
                asyncio.create_task(run_worker(settings, workers_stop)),
                asyncio.create_task(run_examples_worker(settings, workers_stop)),
            ]
            saying = asyncio.create_task(say_where_once_up(settings, embedded))
            try:
                await serve_gateway(settings, stop)
            finally:
                saying.cancel()
                workers_stop.set()
                # each drains within its own bound; the server they report to stops after
                await asyncio.wait(workers)
            for task in workers:
                task.result()  # a worker's own failure


async def refuse_parked(settings: Settings) -> None:
    """`DATA_DIR`'s server holds workflows parked under code before 0.1.0: one sentence, and
    `dev` stops (exit code 2) rather than serve them a wall of replay failures."""
    from ag_ui_temporal.temporal_client import connect
    from ag_ui_temporal.worker import parked, parked_before_baseline

    if count := await parked_before_baseline(await connect(settings)):
        data = settings.data_dir
        raise SettingError(
            f"{data}/ holds {parked(count)}: move it aside "
            f"(mv {data} {data}.pre-0.1.0) and run again"
        )


async def run_examples_worker(settings: Settings, stop: asyncio.Event) -> None:
    """The `examples` task queue's worker (OrderWorkflow): stands in for the user's own
    worker, so `python -m ag_ui_temporal.examples.order_approval` works on the `dev` stack."""
    from ag_ui_temporal.examples.orders import build_examples_worker
    from ag_ui_temporal.temporal_client import connect
    from ag_ui_temporal.worker_health import run_until_stopped

    worker = build_examples_worker(await connect(settings))
    await run_until_stopped(worker, stop, drain=0)  # it runs no activities
