"""`ag-ui-temporal`: run the stack (`dev`), one process of it (`worker`, `gateway`),
look at and answer approval chains (`approvals list|show|approve|reject`), make an API
key (`hash-key`), or create/upgrade the store's schema (`migrate`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import Any

from cli import approvals, keys, migrate
from settings import Settings, get_settings

__all__ = ["main"]

PROCESSES = ("dev", "worker", "gateway")


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="ag-ui-temporal", description=__doc__)
    commands = root.add_subparsers(dest="command", required=True)
    commands.add_parser("dev", help="embedded Temporal server + worker + gateway")
    commands.add_parser("worker", help="the Temporal worker")
    commands.add_parser("gateway", help="the AG-UI HTTP gateway")
    approvals.add_commands(commands)
    keys.add_command(commands)
    migrate.add_command(commands)
    return root


def observe(settings: Settings, command: str) -> None:
    """Logs for every command (text for people at a terminal), traces for the processes."""
    from observability.logs import configure_logging, settings_secrets
    from observability.tracing import setup_tracing

    fmt = settings.log_format or ("text" if command in ("dev", "approvals") else "json")
    configure_logging(fmt, settings.log_level, settings_secrets(settings))
    if command in PROCESSES:
        setup_tracing(settings, f"ag-ui-temporal-{command}")


def process(command: str) -> Callable[[Settings], Coroutine[Any, Any, None]]:
    """The coroutine that runs `dev`, `worker` or `gateway` (imported only when run)."""
    from cli import dev, serve

    return {"dev": dev.dev, "worker": serve.serve_worker, "gateway": serve.serve_gateway}[command]


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    if args.command == "hash-key":
        keys.run(args)  # reads no settings, configures nothing
        return
    settings = get_settings()
    observe(settings, args.command)
    if args.command == "approvals":
        url = f"http://{settings.gateway_host}:{settings.gateway_port}"
        raise SystemExit(approvals.run(args, url))
    if args.command == "migrate":
        asyncio.run(migrate.run(settings, args))
        return
    if args.command in ("dev", "gateway"):
        from cli.serve import refuse_unsafe

        refuse_unsafe(settings)
    runner = asyncio.Runner(loop_factory=event_loop(args.command))
    with contextlib.suppress(KeyboardInterrupt), runner:
        runner.run(process(args.command)(settings))


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
