"""HTTP/1.1 over a plain socket, for tests of what a client library would not send."""

from __future__ import annotations

import asyncio
import contextlib
import json
import urllib.parse
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@contextlib.asynccontextmanager
async def connection(url: str) -> AsyncIterator[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    parts = urllib.parse.urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        yield reader, writer
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


def head(path: str = "/healthz", *headers: tuple[str, str], end: bool = True) -> bytes:
    """A GET's request head (`end=False`: without the blank line that ends it)."""
    lines = [f"GET {path} HTTP/1.1", "Host: gateway", *(f"{n}: {v}" for n, v in headers)]
    return ("\r\n".join(lines) + "\r\n" + ("\r\n" if end else "")).encode()


async def read_answer(reader: asyncio.StreamReader) -> Answer:
    """One response with a `Content-Length` (what the gateway's JSON answers carry)."""
    status_line = await reader.readline()
    assert status_line.startswith(b"HTTP/1.1 "), status_line[:200]
    headers: dict[str, str] = {}
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return Answer(int(status_line.split()[1]), headers, body)


async def write_all(writer: asyncio.StreamWriter, chunks: list[bytes]) -> None:
    """Write `chunks` one by one; a server that closed the connection meanwhile ends it."""
    with contextlib.suppress(ConnectionError):
        for chunk in chunks:
            writer.write(chunk)
            await writer.drain()
