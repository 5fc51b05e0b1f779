"""`ag-ui-temporal gateway` as its own process: its request heads are bounded in size and
time as the test fixtures' gateway is (`ag-ui-temporal dev` serves through the same
`cli.serve.serve_gateway`)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from temporalio.client import Client

from tests.conftest import free_port
from tests.gateway.raw_http import connection, head, read_answer, write_all

BIN = Path(sys.executable).parent


@pytest.fixture
async def gateway_process(client: Client, tmp_path: Path) -> AsyncIterator[str]:
    port = free_port()
    env = {
        **os.environ,
        "TEMPORAL_ADDRESS": client.service_client.config.target_host,
        "DATA_DIR": str(tmp_path),
        "GATEWAY_PORT": str(port),
        "HEADER_TIMEOUT": "1s",
        "MAX_HEADER_BYTES": "8192",
    }
    process = await asyncio.create_subprocess_exec(
        str(BIN / "ag-ui-temporal"), "gateway", env=env, cwd=tmp_path
    )
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=url) as http, asyncio.timeout(60):  # liveness
            while True:
                try:
                    if (await http.get("/healthz")).status_code == 200:
                        break
                except httpx.TransportError:  # not listening yet
                    await asyncio.sleep(0.1)
        yield url
    finally:
        process.send_signal(signal.SIGINT)
        await process.wait()


async def test_the_gateway_command_bounds_request_heads(gateway_process: str):
    async with connection(gateway_process) as (reader, writer), asyncio.timeout(60):
        start = head("/healthz", ("X-Big", ""), end=False).removesuffix(b"\r\n")
        writing = asyncio.create_task(write_all(writer, [start, b"a" * (256 << 10)]))
        answer = await read_answer(reader)
        assert answer.status == 431 and "8192 bytes" in answer.json()["detail"]
        await writing
    async with connection(gateway_process) as (reader, writer), asyncio.timeout(60):
        writer.write(head("/healthz", end=False))
        answer = await read_answer(reader)
        assert answer.status == 408 and "HEADER_TIMEOUT" in answer.json()["detail"]
        assert await reader.read() == b""
