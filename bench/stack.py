"""The processes under test, each its own OS process on free loopback ports."""

from __future__ import annotations

import asyncio
import compileall
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    port: int = 0
    """The port it serves on, where the bench chose one (the peer)."""
    ps: psutil.Process = field(init=False)

    def __post_init__(self) -> None:
        self.ps = psutil.Process(self.popen.pid)

    def tree(self) -> list[psutil.Process]:
        try:
            return [self.ps, *self.ps.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def rss(self) -> int:
        total = 0
        for proc in self.tree():
            try:
                total += proc.memory_info().rss
            except psutil.NoSuchProcess:
                pass
        return total

    def cpu_seconds(self) -> float:
        total = 0.0
        for proc in self.tree():
            try:
                times = proc.cpu_times()
                total += times.user + times.system
            except psutil.NoSuchProcess:
                pass
        return total

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(10)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


def spawn(name: str, command: list[str], workdir: Path, env: dict[str, str] | None = None) -> Proc:
    log = workdir / f"{name}.log"
    full_env = {**os.environ, **(env or {})}
    handle = log.open("wb")
    popen = subprocess.Popen(
        command, cwd=workdir, env=full_env, stdout=handle, stderr=subprocess.STDOUT
    )
    return Proc(name, popen, log)


@dataclass
class Stack:
    """Temporal dev server (SQLite + WAL), worker, gateway, raw-Temporal floor worker."""

    workdir: Path
    temporal_port: int = field(default_factory=free_port)
    gateway_port: int = field(default_factory=free_port)
    metrics_port: int = field(default_factory=free_port)
    """The server's Prometheus endpoint (its `action` counter: billable actions)."""
    procs: dict[str, Proc] = field(default_factory=dict)
    server_config: list[str] = field(default_factory=list)
    """The dev server's dynamic config values (`KEY=JSON_VALUE`) beyond its defaults."""
    agent_modules: list[str] = field(
        default_factory=lambda: ["ag_ui_temporal.demo.agents", "bench.stream_agent"]
    )
    """`AGENT_MODULES` of the worker and the gateway: the demo assistant (the cycles and the
    resumes), the streaming scenario's agent (bench/stream_agent.py), and the LangGraph
    comparison's graph when that phase runs (bench/graph_agent.py)."""

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.temporal_port}"

    @property
    def db(self) -> Path:
        return self.workdir / "temporal.sqlite"

    @property
    def data_dir(self) -> Path:
        return self.workdir / "data"

    @property
    def store(self) -> Path:
        """The worker's store (the tools' outbox): SQLite, as `make run` has it."""
        return self.data_dir / "store.sqlite3"

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.metrics_port}/metrics"

    @property
    def gateway_url(self) -> str:
        return f"http://127.0.0.1:{self.gateway_port}"

    @property
    def src(self) -> Path:
        return self.workdir / "src"

    def snapshot(self) -> None:
        """Copy the project's code: the processes run this copy (PYTHONPATH wins over the
        editable install), so edits made to the tree during the bench cannot mix versions
        (the workflow sandbox re-imports workflows/* for every workflow it creates).

        The copy is byte-compiled as an installed package is (pip compiles on install):
        with PYTHONDONTWRITEBYTECODE set, the sandbox would otherwise compile every
        workflow module from source for every workflow it loads (40% of worker CPU)."""
        ignore = shutil.ignore_patterns("__pycache__", "node_modules", "*.pyc")
        packages = [p.parent for p in ROOT.glob("*/__init__.py") if p.parent.name != "tests"]
        for package in packages:
            shutil.copytree(package, self.src / package.name, ignore=ignore)
        for module in ROOT.glob("*.py"):
            shutil.copy2(module, self.src / module.name)
        compileall.compile_dir(self.src, quiet=1)

    def env(self) -> dict[str, str]:
        return {
            "PYTHONPATH": str(self.src),
            "TEMPORAL_ADDRESS": self.address,
            "DATA_DIR": str(self.data_dir),
            "DATABASE_URL": f"sqlite+aiosqlite:///{self.store}",
            "GATEWAY_HOST": "127.0.0.1",
            "GATEWAY_PORT": str(self.gateway_port),
            # One anonymous client sends every run: the per-principal limits would cap the
            # very throughput the bench measures.
            "MAX_RUNS_PER_MINUTE": "1000000",
            "MAX_STREAMS_PER_PRINCIPAL": "100000",
            # the offline demo model types at a reader's pace by default (`make run`): the
            # bench measures the stack, not that pace
            "OFFLINE_MODEL_WORD_DELAY": "0",
            "AGENT_MODULES": json.dumps(self.agent_modules),
        }

    def start_server(self) -> None:
        self.procs["server"] = spawn(
            "server",
            [
                str(BIN / "temporal"),
                "server",
                "start-dev",
                "--headless",
                "--log-level",
                "error",
                "--ip",
                "127.0.0.1",
                "--port",
                str(self.temporal_port),
                "--http-port",
                str(free_port()),
                "--metrics-port",
                str(self.metrics_port),
                "--db-filename",
                str(self.db),
                "--sqlite-pragma",
                "journal_mode=wal",
                "--sqlite-pragma",
                "synchronous=normal",
                "--search-attribute",
                "AguiRunIds=KeywordList",
                *(arg for value in self.server_config for arg in ("--dynamic-config-value", value)),
            ],
            self.workdir,
        )

    def start_worker(self, extra_env: dict[str, str] | None = None) -> None:
        # The store's migrations first, as the deployments run them before the worker.
        migrate = [str(BIN / "ag-ui-temporal"), "migrate"]
        subprocess.run(migrate, cwd=self.workdir, env={**os.environ, **self.env()}, check=True)
        self.procs["worker"] = spawn(
            "worker",
            [str(BIN / "ag-ui-temporal"), "worker"],
            self.workdir,
            {**self.env(), **(extra_env or {})},
        )

    def start_gateway(self, command: list[str] | None = None) -> None:
        self.procs["gateway"] = spawn(
            "gateway", command or [str(BIN / "ag-ui-temporal"), "gateway"], self.workdir, self.env()
        )

    def start_floor_worker(self) -> None:
        self.procs["floor"] = spawn(
            "floor",
            [sys.executable, "-m", "bench.floor", self.address],
            self.workdir,
            {"PYTHONPATH": str(self.src)},
        )

    def stop(self) -> None:
        for name in ("gateway", "peer", "graph_peer", "floor", "worker", "server"):
            if name in self.procs:
                self.procs[name].stop()

    def sqlite_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.workdir.glob("temporal.sqlite*") if p.is_file())

    def sqlite_tables(self) -> dict[str, int]:
        """Bytes per table (and its indexes) in the server's SQLite, and the visibility rows:
        what each parked thread costs the persistence, read with SQLite's `dbstat`."""
        db = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=30)
        try:
            rows = db.execute(
                "SELECT coalesce(m.tbl_name, d.name), sum(d.pgsize) FROM dbstat d"
                " LEFT JOIN sqlite_master m ON m.name = d.name GROUP BY 1"
            ).fetchall()
            out = {str(name): int(size) for name, size in rows}
            out["visibility_rows"] = db.execute(
                "SELECT count(*) FROM executions_visibility"
            ).fetchone()[0]
        finally:
            db.close()
        return out

    def store_bytes(self) -> int:
        """The project's own store (outbox, transcript archive), SQLite with its WAL."""
        return sum(p.stat().st_size for p in self.data_dir.glob("store.sqlite3*") if p.is_file())


async def wait_until(
    check: Callable[[], Awaitable[object]], seconds: float = 60, what: str = ""
) -> None:
    deadline = time.monotonic() + seconds
    last: BaseException | None = None
    while time.monotonic() < deadline:
        try:
            if await check():
                return
        except Exception as err:  # not up yet
            last = err
        await asyncio.sleep(0.1)
    raise RuntimeError(f"{what} not ready after {seconds}s: {last!r}")
