"""`ag-ui-temporal worker` stops on SIGINT while it is still connecting: a Temporal address
that accepts connections and never answers keeps the client's connect waiting."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
from pathlib import Path

import httpx

from tests.conftest import free_port
from tests.test_worker_process import wait_for

BIN = Path(os.environ.get("VIRTUAL_ENV", Path(__file__).parents[1] / ".venv")) / "bin"


async def test_a_worker_still_connecting_stops_on_sigint(tmp_path: Path):
    silent = socket.socket()  # listens, accepts into its backlog, never speaks HTTP/2
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    health = free_port()
    env = {
        **os.environ,
        "TEMPORAL_ADDRESS": f"127.0.0.1:{silent.getsockname()[1]}",
        "DATA_DIR": str(tmp_path),
        "WORKER_HEALTH_PORT": str(health),
    }
    env.pop("DATABASE_URL", None)
    process = await asyncio.create_subprocess_exec(
        str(BIN / "ag-ui-temporal"), "worker", env=env, cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{health}") as client:

            async def answering() -> bool:  # the health endpoint is up before it connects
                try:
                    return (await client.get("/livez")).status_code in (200, 503)
                except httpx.TransportError:
                    return False

            await wait_for(answering, seconds=60)
        assert process.returncode is None  # still connecting
        process.send_signal(signal.SIGINT)
        code = await asyncio.wait_for(process.wait(), 60)
        assert process.stdout is not None
        assert code == 0, (await process.stdout.read()).decode()
    finally:
        silent.close()
        if process.returncode is None:
            process.kill()
            await process.wait()
