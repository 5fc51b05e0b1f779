"""The real processes the fault harness kills: Temporal's dev server, the workers, the gateway.

Each is started as the operator starts it (`temporal server start-dev`, `ag-ui-temporal worker`,
`ag-ui-temporal gateway`), with its own free port and a state directory that outlives it, so a
SIGKILLed process can be started again on the same address and find its state. A process that
exits on its own (e.g. the gateway cannot reach a Temporal that is down) is started again, as a
supervisor would, and counted: the report shows it. The examples worker (the orders' owner,
standing in for a user's own worker) and a team's producer worker on a plain client (`plain`:
tests/faults/plain_worker.py) run beside them and are not killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import httpx
from temporalio.client import Client

from ag_ui_temporal.settings import sqlite_url
from ag_ui_temporal.store.migrate import upgrade
from ag_ui_temporal.workflows.contract import SEARCH_ATTRIBUTES
from tests.audit_trails import TEST_AUDIT_KEY
from tests.conftest import TLS, steady_port

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[2]
POLL = 0.05
"""Seconds between readiness probes."""
MAX_BACKOFF = 1.0
MAX_LAUNCHES = 60
"""Consecutive launches that die before ready: then the process is broken, not waiting."""
READY_WITHIN = 120.0
"""Seconds a live process may take to become ready (a bound, not an expectation)."""
PR_SET_PDEATHSIG = 1

OWNERS = ("examples", "plain")
"""The owners' workers: they stand for users' own workers, which the chaos leaves alone."""

log = logging.getLogger("faults")
_prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform == "linux" else None


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL it when the harness dies, however it dies."""
    if _prctl is not None:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


@dataclass(eq=False)
class Service:
    """One restartable process, ready when `probe` says so."""

    name: str
    command: list[str]
    env: dict[str, str]
    workdir: Path
    probe: Callable[[], Awaitable[bool]]
    process: asyncio.subprocess.Process | None = None
    log: IO[bytes] | None = None
    starts: int = 0
    unexpected_exits: list[int] = field(default_factory=list)
    """Return codes of exits nobody asked for (the process was started again)."""
    _watch: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start the process and wait until it is ready; started again if it exits before."""
        delay = POLL
        for _ in range(MAX_LAUNCHES):
            if await self._launch():
                break
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_BACKOFF)
        else:
            raise RuntimeError(f"{self.name} never became ready:\n{self.tail()}")
        log.info("%s ready (pid %s, start %s)", self.name, self.pid, self.starts)
        self._watch = asyncio.create_task(self._restart_on_exit())

    async def _launch(self) -> bool:
        self.log = self.log or self.log_path.open("ab")
        self.process = await asyncio.create_subprocess_exec(
            *self.command, env=self.env, cwd=self.workdir, stdin=asyncio.subprocess.DEVNULL,
            stdout=self.log, stderr=asyncio.subprocess.STDOUT, start_new_session=True,
            preexec_fn=_die_with_parent,
        )  # fmt: skip
        self.starts += 1
        exited = asyncio.ensure_future(self.process.wait())
        deadline = asyncio.get_running_loop().time() + READY_WITHIN
        try:
            while not exited.done():
                if await self.probe():
                    return True
                if asyncio.get_running_loop().time() > deadline:
                    await self._sigkill()  # up but never ready: a launch that failed
                    break
                await asyncio.wait([exited], timeout=POLL)
        finally:
            exited.cancel()
        return False

    async def _restart_on_exit(self) -> None:
        assert self.process is not None
        code = await self.process.wait()
        log.warning("%s exited by itself (%s): starting it again", self.name, code)
        self.unexpected_exits.append(code)
        await self.start()

    async def kill(self) -> None:
        """SIGKILL, then wait until the PID is gone (no restart: the caller decides)."""
        await self._stop_watching()
        await self._sigkill()

    async def _sigkill(self) -> None:
        if self.process is not None and self.process.returncode is None:
            log.info("SIGKILL %s (pid %s)", self.name, self.pid)
            os.kill(self.process.pid, signal.SIGKILL)
            await self.process.wait()

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    async def _stop_watching(self) -> None:
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watch

    async def close(self) -> None:
        await self.kill()
        if self.log is not None:
            self.log.close()

    @property
    def log_path(self) -> Path:
        return self.workdir / f"{self.name}.log"

    def tail(self, lines: int = 30) -> str:
        path = self.log_path
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


async def _http_ok(url: str) -> bool:
    try:
        async with httpx.AsyncClient(timeout=2, verify=TLS) as http:
            return (await http.get(url)).status_code == 200
    except httpx.HTTPError:
        return False


async def temporal_answers(address: str) -> bool:
    try:
        client = await Client.connect(address)
        return await client.service_client.check_health()
    except Exception:  # refused, or still starting
        return False


@dataclass
class Stack:
    """The server, the workers, the gateway and the owners' workers of one harness run."""

    workdir: Path
    temporal_address: str
    gateway_url: str
    store_url: str
    """The store (outbox, transcripts) every worker and the gateway share."""
    services: dict[str, Service]

    @property
    def killable(self) -> tuple[str, ...]:
        """What the chaos kills: all but the owners' workers (the users' own workers)."""
        return tuple(name for name in self.services if name not in OWNERS)

    def unexpected_exits(self) -> dict[str, list[int]]:
        return {n: s.unexpected_exits for n, s in self.services.items() if s.unexpected_exits}


@dataclass(frozen=True)
class Layout:
    """What one harness run starts: its task queues, store and number of thread workers."""

    task_queue: str
    examples_queue: str
    store_url: str | None = None
    """None: SQLite in the stack's state directory."""
    workers: int = 1
    input_expires_in: str = "20s"
    approval_step_timeout: str = "300s"

    @property
    def plain_queue(self) -> str:
        """The task queue of the producer on a plain client."""
        return f"{self.examples_queue}-plain"


def build_stack(workdir: Path, layout: Layout, notify: Mapping[str, str]) -> Stack:
    """The processes, sharing one environment; `notify`: the notification channels, the
    directory and the links' secret (tests/faults/notices.py), the links pointing at the
    gateway."""
    host = "127.0.0.1"
    # each is bound again after every kill: out of the range other tests' ports come from
    temporal_port, gateway_port = steady_port(), steady_port()
    address = f"{host}:{temporal_port}"
    gateway_url = f"http://{host}:{gateway_port}"
    data = workdir / "data"
    data.mkdir(parents=True, exist_ok=True)
    store_url = layout.store_url or sqlite_url(data / "store.sqlite3")
    env = {
        **os.environ,
        "TEMPORAL_ADDRESS": address,
        "TASK_QUEUE": layout.task_queue,
        "DATA_DIR": str(data),
        "DATABASE_URL": store_url,
        "AUDIT_KEY": TEST_AUDIT_KEY,  # every worker's, and `check_audit`'s verify
        "PYTHONPATH": str(ROOT),  # this tree's modules, even before a reinstall
        "AUTH_MODE": "dev",  # X-Principal headers: flows act as requesters and approvers
        "AGENT_MODULES": '["ag_ui_temporal.demo.agents"]',  # the flows are the demo's
        "INPUT_EXPIRES_IN": layout.input_expires_in,
        "APPROVAL_STEP_TIMEOUT": layout.approval_step_timeout,
        "APPROVAL_REMIND_EVERY": layout.approval_step_timeout,  # no reminder before expiry
        **notify,
        "PUBLIC_URL": gateway_url,  # the decision links the notices carry lead here
    }
    server = [
        str(BIN / "temporal"), "server", "start-dev", "--headless", "--log-level", "error",
        "--ip", host, "--port", str(temporal_port),
        "--http-port", str(steady_port()), "--metrics-port", str(steady_port()),
        "--db-filename", str(data / "temporal.sqlite"),
        "--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal",
        *(a for k in SEARCH_ATTRIBUTES for a in ("--search-attribute", f"{k.name}=KeywordList")),
    ]  # fmt: skip
    services = [
        Service("temporal", server, env, workdir, lambda: temporal_answers(address)),
        *(_worker(name, env, workdir) for name in _worker_names(layout.workers)),
        Service(
            "gateway",
            [str(BIN / "ag-ui-temporal"), "gateway"],
            # Pings every second keep a quiet stream distinguishable from a dead one.
            {**env, "GATEWAY_HOST": host, "GATEWAY_PORT": str(gateway_port), "SSE_KEEPALIVE": "1s"},
            workdir,
            lambda: _http_ok(f"{gateway_url}/healthz"),
        ),
        Service(
            "examples",
            [sys.executable, "-m", "tests.faults.examples_worker", layout.examples_queue],
            env,
            workdir,
            _up_a_moment,
        ),
        Service(
            "plain",
            [sys.executable, "-m", "tests.faults.plain_worker", layout.plain_queue],
            env,
            workdir,
            _up_a_moment,
        ),
    ]
    return Stack(workdir, address, gateway_url, store_url, {s.name: s for s in services})


def _worker_names(workers: int) -> list[str]:
    return ["worker"] if workers == 1 else [f"worker-{i}" for i in range(1, workers + 1)]


def _worker(name: str, env: dict[str, str], workdir: Path) -> Service:
    """A thread worker (`ag-ui-temporal worker`), ready when its health port says so."""
    health = steady_port()
    return Service(
        name,
        [str(BIN / "ag-ui-temporal"), "worker"],
        {**env, "WORKER_HEALTH_PORT": str(health)},
        workdir,
        lambda: _http_ok(f"http://127.0.0.1:{health}/readyz"),
    )


async def _up_a_moment() -> bool:
    """The owners' workers have no health port: alive for a second counts as started."""
    await asyncio.sleep(1)
    return True


@contextlib.asynccontextmanager
async def running_stack(
    workdir: Path, layout: Layout, notify: Mapping[str, str]
) -> AsyncIterator[Stack]:
    """Every process up and ready; every one of them killed on exit, even on failure."""
    stack = build_stack(workdir, layout, notify)
    await upgrade(stack.store_url)  # as the deployments do: migrations before the processes
    try:
        await stack.services["temporal"].start()
        await asyncio.gather(
            *(s.start() for name, s in stack.services.items() if name != "temporal")
        )
        yield stack
    finally:
        for service in stack.services.values():
            await service.close()
