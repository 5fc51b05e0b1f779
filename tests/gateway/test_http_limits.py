"""Request heads bounded in size (`MAX_HEADER_BYTES`: 431) and in time (`HEADER_TIMEOUT`),
on real sockets against the gateway under uvicorn on loopback, as `ag-ui-temporal gateway`
serves it (`gateway/server.py`)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio.client import Client

from ag_ui_temporal.settings import Settings
from tests.conftest import serve_gateway
from tests.gateway.raw_http import Answer, connection, head, read_answer, write_all

MIB = 1 << 20
SHORT = timedelta(seconds=2)


@pytest.fixture(scope="module")
async def hurried_url(client: Client, data_dir: Path) -> AsyncIterator[str]:
    """A gateway that gives a request head `SHORT` to arrive."""
    name = f"heads-{uuid.uuid4().hex[:8]}"
    settings = Settings(data_dir=data_dir / name, task_queue=name, header_timeout=SHORT)
    async with serve_gateway(settings, client) as url:
        yield url


def assert_refused(answer: Answer, status: int, setting: str) -> None:
    assert answer.status == status, answer
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["connection"] == "close"
    assert setting in answer.json()["detail"]


async def test_a_huge_header_is_431_before_it_ends(gateway_url: str, settings: Settings):
    # 1 MiB of one header that never ends: a server waiting for its end (holding it all)
    # would never answer, only time the connection out (408)
    start = head("/healthz", ("X-Big", ""), end=False).removesuffix(b"\r\n")
    chunks = [start] + [b"a" * (16 << 10)] * (MIB // (16 << 10))
    async with connection(gateway_url) as (reader, writer), asyncio.timeout(60):
        writing = asyncio.create_task(write_all(writer, chunks))
        answer = await read_answer(reader)
        assert_refused(answer, 431, "MAX_HEADER_BYTES")
        assert str(settings.max_header_bytes) in answer.json()["detail"]
        assert await reader.read() == b""  # and the connection ends
        await writing


async def test_many_headers_over_the_limit_in_one_write_are_431(gateway_url: str):
    many = [(f"X-H{i}", "v" * 1000) for i in range(100)]  # ~100 KiB, the head complete
    async with connection(gateway_url) as (reader, writer), asyncio.timeout(60):
        writer.write(head("/healthz", *many))
        assert_refused(await read_answer(reader), 431, "MAX_HEADER_BYTES")
        assert await reader.read() == b""


async def test_heads_under_the_limit_are_served_and_kept_alive(gateway_url: str):
    cookie = ("Cookie", "c" * (32 << 10))  # large, but under 64 KiB
    async with connection(gateway_url) as (reader, writer):
        for _ in range(3):  # one connection, three requests
            writer.write(head("/healthz", cookie))
            answer = await read_answer(reader)
            assert answer.status == 200 and answer.json()["status"] == "ok"
            assert answer.headers.get("connection") != "close"


async def test_a_connection_that_sends_nothing_is_closed(hurried_url: str):
    async with connection(hurried_url) as (reader, _), asyncio.timeout(60):  # liveness only
        assert await reader.read() == b""


async def test_a_partial_head_is_answered_408_and_closed(hurried_url: str):
    async with connection(hurried_url) as (reader, writer), asyncio.timeout(60):
        writer.write(head("/healthz", ("X-Slow", "1"), end=False))
        assert_refused(await read_answer(reader), 408, "HEADER_TIMEOUT")
        assert await reader.read() == b""


async def test_each_request_of_a_kept_alive_connection_gets_the_time_again(hurried_url: str):
    async with connection(hurried_url) as (reader, writer), asyncio.timeout(60):
        started = time.monotonic()
        # the connection outlives the timeout: each head is timed from the previous answer
        while time.monotonic() - started < 1.5 * SHORT.total_seconds():
            writer.write(head("/healthz"))
            assert (await read_answer(reader)).status == 200
        writer.write(head("/healthz", end=False))  # then a head that never ends
        assert_refused(await read_answer(reader), 408, "HEADER_TIMEOUT")
        assert await reader.read() == b""
