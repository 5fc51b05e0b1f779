"""`ag-ui-temporal`: run the stack (`dev`), one process of it (`worker`, `gateway`),
look at and answer approval chains (`approvals list|show|approve|reject`), make an API
key (`hash-key`), create/upgrade the store's schema (`migrate`), or verify, export, import
and prune the audit trail (`audit verify|export|import|prune`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from ag_ui_temporal.settings import Settings, get_settings

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = ["main"]

PROCESSES = ("dev", "worker", "gateway")


def parser() -> argparse.ArgumentParser:
    # imported when the parser is built, so that the processes load none of the commands
    from ag_ui_temporal.cli import approvals, audit, keys, migrate

    root = argparse.ArgumentParser(prog="ag-ui-temporal", description=__doc__)
    commands = root.add_subparsers(dest="command", required=True)
    commands.add_parser("dev", help="embedded Temporal server + worker + gateway")
    commands.add_parser("worker", help="the Temporal worker")
    commands.add_parser("gateway", help="the AG-UI HTTP gateway")
    approvals.add_commands(commands)
    keys.add_command(commands)
    migrate.add_command(commands)
    audit.add_command(commands)
    return root


def observe(settings: Settings, command: str) -> TracerProvider | None:
    """Logs for every command (text for people at a terminal), traces for the processes."""
    from ag_ui_temporal.observability.logs import configure_logging, settings_secrets
    from ag_ui_temporal.observability.tracing import setup_tracing

    fmt = settings.log_format or ("text" if command in ("dev", "approvals", "audit") else "json")
    configure_logging(fmt, settings.log_level, settings_secrets(settings))
    return setup_tracing(settings, f"ag-ui-temporal-{command}") if command in PROCESSES else None


def process(command: str) -> Callable[[Settings], Coroutine[Any, Any, None]]:
    """The coroutine that runs `dev`, `worker` or `gateway` (imported only when run)."""
    from ag_ui_temporal.cli import dev, serve

    return {
        "dev": dev.dev,
        "worker": serve.serve_worker,
        "gateway": serve.serve_gateway_process,
    }[command]


def main(argv: list[str] | None = None) -> None:
    from ag_ui_temporal.cli import approvals, audit, keys, migrate

    args = parser().parse_args(argv)
    if args.command == "hash-key":
        keys.run(args)  # reads no settings, configures nothing
        return
    settings = get_settings()
    tracer_provider = observe(settings, args.command)
    if args.command == "approvals":
        url = f"http://{settings.gateway_host}:{settings.gateway_port}"
        raise SystemExit(approvals.run(args, url))
    if args.command == "migrate":
        asyncio.run(migrate.run(settings, args))
        return
    if args.command == "audit":
        raise SystemExit(asyncio.run(audit.run(settings, args)))
    if args.command in ("dev", "gateway"):
        from ag_ui_temporal.cli.serve import refuse_unsafe

        refuse_unsafe(settings)
    runner = asyncio.Runner(loop_factory=event_loop(args.command))
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C; a second one: leave at once
        runner.run(process(args.command)(settings))
    # never `runner.close()`: it would wait for whatever a forced exit left running
    from ag_ui_temporal.temporal_client import exit_stopped  # loads Temporal: not for --help

    exit_stopped(tracer_provider=tracer_provider)


def event_loop(command: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop for the gateway (uvicorn[standard] installs it; uvicorn picks the loop only when
    it makes one, and here `main` makes it): a few % less CPU a request. None: the stdlib
    loop, for the worker (its workflows run in loops of their own) and `dev`, which runs the
    worker too."""
    if command != "gateway":
        return None
    try:
        import uvloop
    except ImportError:  # not on every platform (Windows)
        return None
    return uvloop.new_event_loop
