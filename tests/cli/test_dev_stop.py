"""Ctrl-C stops `ag-ui-temporal dev` whatever is going on: a parked thread, a run whose model
is still streaming to an open event stream (tests/cli/test_dev.py's `make run` test, on the
one stack it starts). The signal goes to the process group, as a terminal sends it; the stack
stops in order (gateway, workers, embedded server) and the process exits 0, leaving no server
behind. A second Ctrl-C leaves at once."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.agui import user
from tests.conftest import free_port

BIN = Path(sys.executable).parent
HANG_GUARD = 180  # seconds: far above any drain; only a hang meets it


@dataclass
class Dev:
    process: asyncio.subprocess.Process
    http: httpx.AsyncClient
    gateway_port: int
    temporal_port: int
    log: Path

    def ctrl_c(self) -> None:
        os.killpg(self.process.pid, signal.SIGINT)  # the whole foreground group, as a terminal

    async def exit_code(self) -> int:
        code = await asyncio.wait_for(self.process.wait(), HANG_GUARD)
        assert code == 0, self.log.read_text()[-4000:]
        return code

    async def server_gone(self) -> bool:
        async with asyncio.timeout(HANG_GUARD):
            while True:
                with socket.socket() as sock:
                    if sock.connect_ex(("127.0.0.1", self.temporal_port)) != 0:
                        return True
                await asyncio.sleep(0.1)


def dev_env(**settings: object) -> dict[str, str]:
    """This process's environment with `settings` over it, minus what would turn off the
    embedded server (`TEMPORAL_ADDRESS`) or the SQLite store (`DATABASE_URL`)."""
    env = {k: v for k, v in os.environ.items() if k not in ("TEMPORAL_ADDRESS", "DATABASE_URL")}
    return env | {name: str(value) for name, value in settings.items()}


@dataclass(frozen=True)
class DevPorts:
    gateway: int
    temporal: int
    ui: int

    @classmethod
    def free(cls) -> DevPorts:
        return cls(free_port(), free_port(), free_port())


@asynccontextmanager
async def dev_stack(
    tmp_path: Path,
    word_delay: float,
    *options: str,
    ports: DevPorts | None = None,
    log_name: str = "dev.log",
    **settings: object,
) -> AsyncIterator[Dev]:
    """`ag-ui-temporal dev [options]` in `tmp_path` (an empty one: a fresh `.data/`), on
    `ports` (else ports of its own; `settings` may add to its environment)."""
    ports = ports or DevPorts.free()
    gateway, temporal = ports.gateway, ports.temporal
    own = {
        "GATEWAY_PORT": gateway,
        "DEV_SERVER_ADDRESS": f"127.0.0.1:{temporal}",
        "DEV_SERVER_UI_PORT": ports.ui,
        "OFFLINE_MODEL_WORD_DELAY": word_delay,  # a run's text streams for seconds
    }
    env = dev_env(**(own | settings))
    log = tmp_path / log_name
    with log.open("wb") as out:
        process = await asyncio.create_subprocess_exec(
            str(BIN / "ag-ui-temporal"), "dev", *options, cwd=tmp_path, env=env,
            stdout=out, stderr=asyncio.subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{gateway}", timeout=60) as http:
            async with asyncio.timeout(HANG_GUARD):  # a cold start: the server, migrations
                while not await _healthy(http):
                    assert process.returncode is None, log.read_text()
                    await asyncio.sleep(0.2)
            yield Dev(process, http, gateway, temporal, log)
    finally:
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGKILL)
            await process.wait()


async def _healthy(http: httpx.AsyncClient) -> bool:
    try:
        return (await http.get("/healthz")).status_code == 200
    except httpx.TransportError:
        return False


async def streaming_run(http: httpx.AsyncClient) -> AsyncGenerator[str, None]:
    """A run whose model is still streaming its text: its event stream stays open."""
    body = {"threadId": "t-streaming", "runId": "r-1", "messages": [user("hello " * 40)]}
    async with http.stream("POST", "/agents/assistant", json=body) as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            yield line


async def test_a_second_ctrl_c_leaves_at_once(tmp_path: Path):
    async with dev_stack(tmp_path, word_delay=1) as dev:  # a drain that takes a while
        lines = streaming_run(dev.http)
        async for line in lines:
            if "TEXT_MESSAGE_CONTENT" in line:
                break
        await lines.aclose()  # the run goes on: the worker drains its model activity

        dev.ctrl_c()
        async with asyncio.timeout(HANG_GUARD):
            while "draining" not in dev.log.read_text():
                await asyncio.sleep(0.1)
        dev.ctrl_c()
        assert await dev.exit_code() == 0
        assert "a second signal" in dev.log.read_text()
        assert await dev.server_gone()  # a forced exit still stops the embedded server
