"""`ag-ui-temporal`: run the stack (`dev`), one process of it (`worker`, `gateway`),
look at and answer approval chains (`approvals list|show|approve|reject`), make an API
key (`hash-key`), create/upgrade the store's schema (`migrate`), verify, export, import
and prune the audit trail (`audit verify|export|import|prune`), or write an agent's
TanStack AI tool definitions (`tools`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from ag_ui_temporal.settings import Settings, get_settings, host_port

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = ["main"]

PROCESSES = ("dev", "worker", "gateway")


def parser() -> argparse.ArgumentParser:
    # imported when the parser is built, so that the processes load none of the commands
    from ag_ui_temporal.cli import approvals, audit, keys, migrate, tools

    root = argparse.ArgumentParser(prog="ag-ui-temporal", description=__doc__)
    commands = root.add_subparsers(dest="command", required=True)
    add_dev_command(commands)
    commands.add_parser("worker", help="the Temporal worker")
    commands.add_parser("gateway", help="the AG-UI HTTP gateway")
    approvals.add_commands(commands)
    keys.add_command(commands)
    migrate.add_command(commands)
    audit.add_command(commands)
    tools.add_command(commands)
    return root


def add_dev_command(commands: Any) -> None:
    """`dev` and its options, each overriding the setting it is named after (docs/settings.md).

    Here rather than in cli/dev.py, which loads Temporal and the gateway: `--help` should not."""
    dev = commands.add_parser(
        "dev",
        help="embedded Temporal server + worker + gateway",
        description="The whole stack in one process (`make run`): an embedded Temporal dev "
        "server with its Temporal UI (unless TEMPORAL_ADDRESS is set), the store's migrations, "
        "the workers and the gateway, which serves the web UI and AG-UI. Once up, it prints "
        "where each is. Ctrl-C stops it.",
        epilog="Each option overrides the setting named in its help (the environment, .env).",
        argument_default=argparse.SUPPRESS,  # an option not given leaves its setting alone
    )
    fields = Settings.model_fields

    def option(name: str, meaning: str, **kwargs: Any) -> None:
        default = kwargs.pop("default_text", f"default {fields[name].default}")
        dev.add_argument(
            f"--{name.replace('_', '-')}",
            dest=name,
            help=f"{meaning} ({name.upper()}; {default})",
            **kwargs,
        )

    option("gateway_host", "where the gateway (web UI + AG-UI) listens", metavar="HOST")
    option("gateway_port", "the gateway's port", type=port_number, metavar="PORT")
    option(
        "dev_server_address",
        "where the embedded Temporal server listens (gRPC)",
        type=address,
        metavar="HOST:PORT",
    )
    option("dev_server_ui_port", "its Temporal UI's port", type=port_number, metavar="PORT")
    option(
        "temporal_address",
        "use this Temporal server and start none",
        type=address,
        metavar="HOST:PORT",
        default_text="unset: the embedded one",
    )
    option("data_dir", "the embedded server's and the store's SQLite files", metavar="DIR")


def port_number(text: str) -> int:
    if not (text.isdigit() and 0 < int(text) < 65536):
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (1-65535)")
    return int(text)


def address(text: str) -> str:
    try:
        host_port(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def with_options(settings: Settings, args: argparse.Namespace) -> Settings:
    """`settings` with the command's options that name a setting (`dev`'s) put over them."""
    given = {k: v for k, v in vars(args).items() if k in Settings.model_fields}
    return Settings(**given) if given else settings  # the environment again, options on top


def observe(settings: Settings, command: str) -> TracerProvider | None:
    """Logs for every command (text for people at a terminal), traces for the processes."""
    from ag_ui_temporal.observability.logs import configure_logging, settings_secrets
    from ag_ui_temporal.observability.tracing import setup_tracing

    for_people = command in ("dev", "approvals", "audit", "tools")
    fmt = settings.log_format or ("text" if for_people else "json")
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
    from ag_ui_temporal.cli import approvals, audit, keys, migrate, tools

    args = parser().parse_args(argv)
    if args.command == "hash-key":
        keys.run(args)  # reads no settings, configures nothing
        return
    settings = with_options(get_settings(), args)
    tracer_provider = observe(settings, args.command)
    if args.command == "approvals":
        url = f"http://{settings.gateway_host}:{settings.gateway_port}"
        raise SystemExit(approvals.run(args, url))
    if args.command == "migrate":
        asyncio.run(migrate.run(settings, args))
        return
    if args.command == "audit":
        raise SystemExit(asyncio.run(audit.run(settings, args)))
    if args.command == "tools":
        raise SystemExit(tools.run(settings, args))
    if args.command in ("dev", "gateway"):
        from ag_ui_temporal.cli.serve import refuse_unsafe

        refuse_unsafe(settings)
    if args.command in ("dev", "worker"):
        from ag_ui_temporal.cli.serve import refuse_unkeyed

        refuse_unkeyed(settings)
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
