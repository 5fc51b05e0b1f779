"""`ag-ui-temporal`: run the stack (`dev`), one process of it (`worker`, `gateway`),
look at and answer approval chains (`approvals list|show|approve|reject`), make an API
key (`hash-key`), create/upgrade the store's schema (`migrate`), verify, export, import
and prune the audit trail (`audit verify|export|import|prune`), or write an agent's
TanStack AI tool definitions (`tools`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any, Final

from ag_ui_temporal.cli.reasons import DEBUG_VARIABLE, debugging, report
from ag_ui_temporal.settings import Settings, get_settings, host_port

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = ["main"]

PROCESSES = ("dev", "worker", "gateway")

_TEMPORAL = ("TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "TEMPORAL_TLS*", "TEMPORAL_API_KEY")
_STORE = ("DATABASE_URL", "DATA_DIR")
_LOGS = ("LOG_FORMAT", "LOG_LEVEL")
_AGENTS = ("AGENT_MODULES", "LLM_MODEL", "OPENAI_*", "OFFLINE_MODEL_WORD_DELAY")
_THREADS = (
    "TASK_QUEUE", "INPUT_EXPIRES_IN", "TOOL_MAX_ATTEMPTS", "INDEX_RUNS", "THREAD_HISTORY_LIMIT",
    "THREAD_TASK_TIMEOUT",
    "MAX_INTERRUPTS_PER_RUN", "MAX_PENDING_INTERRUPTS", "APPROVAL_STEP_TIMEOUT",
    "APPROVAL_REMIND_EVERY",
)  # fmt: skip
_WORKER = (
    *_TEMPORAL, *_STORE, *_THREADS, *_AGENTS, "WORKER_*", "TEMPORAL_DEPLOYMENT_NAME",
    "TEMPORAL_WORKER_BUILD_ID", "AUDIT_*", "PUBLIC_URL", "DIRECTORY_FILE", "NOTIFY_*", "SMTP_*",
    "APPRISE_URLS", "DECISION_LINK_SECRET", *_LOGS, "OTEL_ENABLED",
)  # fmt: skip
_GATEWAY = (
    *_TEMPORAL, *_STORE, *_THREADS, *_AGENTS, "GATEWAY_HOST", "GATEWAY_PORT", "WEB_DIST",
    "CORS_ORIGINS", "SSE_KEEPALIVE", "SNAPSHOT_MAX_BYTES", "AUTH_MODE", "API_KEYS_FILE", "JWT_*",
    "THREAD_ADMINS", "APPROVALS_ADMINS", "AUDITORS", "METRICS_PUBLIC", "DOCS_PUBLIC", "MAX_*",
    "HEADER_TIMEOUT", "STUCK_CHECK_EVERY", "PUBLIC_URL", "DIRECTORY_FILE", "DECISION_LINK_SECRET",
    *_LOGS,
    "OTEL_ENABLED",
)  # fmt: skip
READS: Final[dict[str, tuple[str, ...]]] = {
    "dev": (*dict.fromkeys((*_WORKER, *_GATEWAY)), "DEV_SERVER_ADDRESS", "DEV_SERVER_UI_PORT"),
    "worker": _WORKER,
    "gateway": _GATEWAY,
    "migrate": (*_STORE, *_LOGS),
    "audit": (*_STORE, "AUDIT_*", *_LOGS),
    "approvals": ("GATEWAY_HOST", "GATEWAY_PORT", *_LOGS),
    "tools": (*_AGENTS, *_LOGS),
    "hash-key": (),
}
"""The settings (docs/settings.md) each command reads, as its `--help` lists them; a `*` stands
for every setting it matches (tests/cli/test_startup.py: each matches one, and every setting
is some command's)."""
DEBUG_HELP = f"on a failure, print the full traceback besides its one line (or {DEBUG_VARIABLE}=1)"


def parser() -> argparse.ArgumentParser:
    # imported when the parser is built, so that the processes load none of the commands
    from ag_ui_temporal.cli import approvals, audit, keys, migrate, tools

    root = argparse.ArgumentParser(prog="ag-ui-temporal", description=__doc__)
    root.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    commands = root.add_subparsers(dest="command", required=True)
    add_dev_command(commands)
    commands.add_parser(
        "worker",
        help="the Temporal worker",
        description="The Temporal worker: thread workflows, approval chains, notifications, the "
        "agents' and tools' activities. SIGTERM (or Ctrl-C) drains it; a second one leaves "
        "at once.",
    )
    commands.add_parser(
        "gateway",
        help="the AG-UI HTTP gateway",
        description="The AG-UI gateway over HTTP: /agents/{agent}, the approvals API, decision "
        "links, the web UI at /. SIGTERM (or Ctrl-C) stops it, its open streams given a few "
        "seconds.",
    )
    approvals.add_commands(commands)
    keys.add_command(commands)
    migrate.add_command(commands)
    audit.add_command(commands)
    tools.add_command(commands)
    for name, command in commands.choices.items():
        with_debug_and_settings(name, command)
    return root


def with_debug_and_settings(name: str, command: argparse.ArgumentParser) -> None:
    """`--debug` on every command, and what it reads in its `--help`."""
    command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                         help=DEBUG_HELP)  # fmt: skip
    reads = READS[name]
    said = (
        f"Settings it reads (the environment or .env; docs/settings.md): {', '.join(reads)}"
        " (NAME_*: each that begins so)."
        if reads
        else "It reads no settings."
    )
    command.epilog = f"{command.epilog} {said}" if command.epilog else said
    command.epilog += " Exit codes: 0 done, 1 failed, 2 a setting or option is wrong."


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
    """Run the command `argv` names. A failure is said in one line on stderr, naming what to
    change, and ends the process with its code (cli/reasons.py): before a process starts, as
    SystemExit; once it ran, through `exit_stopped`, as every ending of a process does."""
    args = parser().parse_args(argv)  # --help, and a malformed option: argparse's own exit
    debug = debugging(args.debug)
    if args.command == "hash-key":
        from ag_ui_temporal.cli import keys

        keys.run(args)  # reads no settings, configures nothing
        return
    with said_in_a_line(args.command, debug):
        settings = with_options(get_settings(), args)
        tracer_provider = observe(settings, args.command)
        if args.command not in PROCESSES:
            raise SystemExit(run_command(args, settings))
        if args.command in ("dev", "gateway"):
            from ag_ui_temporal.cli.serve import refuse_unsafe

            refuse_unsafe(settings)
        if args.command in ("dev", "worker"):
            from ag_ui_temporal.cli.serve import refuse_unkeyed

            refuse_unkeyed(settings)
    runner = asyncio.Runner(loop_factory=event_loop(args.command))
    code = 0
    try:
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C; a second one: leave at once
            runner.run(process(args.command)(settings))
    except BaseException as err:  # said in a line, then the one way out
        code = report(args.command, err, debug)
    # never `runner.close()`: it would wait for whatever a forced exit left running; and
    # never a plain exit once Temporal's runtime runs (`exit_stopped` says why)
    from ag_ui_temporal.temporal_client import exit_stopped  # loads Temporal: not for --help

    exit_stopped(code, tracer_provider=tracer_provider)


def run_command(args: argparse.Namespace, settings: Settings) -> int:
    """A command other than the processes; its exit code."""
    from ag_ui_temporal.cli import approvals, audit, migrate, tools

    if args.command == "approvals":
        url = f"http://{settings.gateway_host}:{settings.gateway_port}"
        return approvals.run(args, url)
    if args.command == "migrate":
        asyncio.run(migrate.run(settings, args))
        return 0
    if args.command == "audit":
        return asyncio.run(audit.run(settings, args))
    assert args.command == "tools", args.command
    return tools.run(settings, args)


@contextlib.contextmanager
def said_in_a_line(command: str, debug: bool) -> Iterator[None]:
    """What fails in the block is said in one line, then SystemExit with its code."""
    try:
        yield
    except KeyboardInterrupt:
        raise
    except BaseException as err:  # said in a line
        if isinstance(err, SystemExit) and not isinstance(err.code, str):
            raise  # an exit code, said already
        raise SystemExit(report(command, err, debug)) from None


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
