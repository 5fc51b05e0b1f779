"""A small HTTP/1.1 proxy on 127.0.0.1 that sees every request and can cut a stream.

Put it in front of the gateway to play the network between a real client and
the server: `requests` is every request as it arrived (a test awaits one with
`wait_for`), and `cut_next(predicate, how)` arms a one-shot cut: the response to
the next matching request is forwarded up to and including its first SSE frame
that has an `id:`, then the proxy closes the client's connection, either

- "drop": the chunked body left unfinished, so the client's read fails (a
  dropped connection), or
- "end": the body properly ended, so the client sees the response end cleanly
  without a terminal event (a proxy or load balancer ending a long response).

Each request goes upstream on its own connection and every response is sent
back `Connection: close`, so one client connection carries one request.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from types import TracebackType
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

import httpx

HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-length",
    "host",
    "proxy-connection",
    "te",
    "trailer",
    "upgrade",
}


@dataclass
class Request:
    """One request as the client sent it (header names lower-cased)."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes
    cut: Cut | None = None
    """How the proxy cut this request's response, if it did."""

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def query(self) -> dict[str, str]:
        return {name: values[-1] for name, values in parse_qs(urlsplit(self.target).query).items()}

    def json(self) -> Any:
        return json.loads(self.body)


Predicate = Callable[[Request], bool]
Cut = Literal["drop", "end"]


@dataclass
class Proxy:
    upstream: str
    requests: list[Request] = field(default_factory=list)
    url: str = ""
    _cut: tuple[Predicate, Cut] | None = None
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    _server: asyncio.Server | None = None
    _handlers: set[asyncio.Task[None]] = field(default_factory=set)
    _http: httpx.AsyncClient | None = None

    def cut_next(self, predicate: Predicate, how: Cut = "drop") -> None:
        """Cut the response to the next request matching `predicate` after its first `id:`."""
        self._cut = (predicate, how)

    async def wait_for(self, predicate: Predicate) -> Request:
        """The first request (already seen or still to come) that matches `predicate`."""
        async with self._changed:
            await self._changed.wait_for(lambda: any(map(predicate, self.requests)))
            return next(filter(predicate, self.requests))

    async def __aenter__(self) -> Proxy:
        self._http = httpx.AsyncClient(base_url=self.upstream, timeout=None)
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        host, port = self._server.sockets[0].getsockname()[:2]
        self.url = f"http://{host}:{port}"
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None and self._http is not None
        self._server.close()
        await self._server.wait_closed()
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        await self._http.aclose()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            request = await _read_request(reader)
            if request is None:
                return
            if self._cut is not None and self._cut[0](request):
                request.cut = self._cut[1]
                self._cut = None
            async with self._changed:
                self.requests.append(request)
                self._changed.notify_all()
            # Forward until the response ends, or stop as soon as the client hangs up.
            forward = asyncio.ensure_future(self._forward(request, writer))
            hangup = asyncio.ensure_future(_until_eof(reader))
            await asyncio.wait([forward, hangup], return_when=asyncio.FIRST_COMPLETED)
            for pending in (forward, hangup):
                pending.cancel()
            await asyncio.gather(forward, hangup, return_exceptions=True)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._handlers.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _forward(self, request: Request, writer: asyncio.StreamWriter) -> None:
        assert self._http is not None
        headers = {k: v for k, v in request.headers.items() if k not in HOP_BY_HOP}
        upstream = self._http.build_request(
            request.method, request.target, headers=headers, content=request.body or None
        )
        response = await self._http.send(upstream, stream=True)
        try:
            reason = HTTPStatus(response.status_code).phrase
            head = [f"HTTP/1.1 {response.status_code} {reason}"]
            head += [
                f"{k}: {v}" for k, v in response.headers.items() if k.lower() not in HOP_BY_HOP
            ]
            head.append("transfer-encoding: chunked")
            if request.cut != "drop":
                # Said on every response but one to be dropped: fetch (undici) takes
                # the end of a `connection: close` socket for the end of its body.
                head.append("connection: close")
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
            pieces = _sse_frames(response) if request.cut else response.aiter_raw()
            async for piece in pieces:
                writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                await writer.drain()
                if request.cut and _has_id(piece):
                    break
            if request.cut == "drop":
                return  # no last chunk: the client's read fails mid-body
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        finally:
            await response.aclose()


async def _read_request(reader: asyncio.StreamReader) -> Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None  # connected and left without a request
    line, *fields = head.decode("latin-1").split("\r\n")
    method, target, _ = line.split(" ", 2)
    headers = {}
    for header in filter(None, fields):
        name, _, value = header.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", ""):
        raise NotImplementedError("chunked request bodies")
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return Request(method, target, headers, body)


async def _until_eof(reader: asyncio.StreamReader) -> None:
    while await reader.read(4096):
        pass


async def _sse_frames(response: httpx.Response):
    """The body as whole SSE frames (each with its blank-line end), so a cut falls between."""
    buffer = b""
    async for chunk in response.aiter_raw():
        buffer += chunk
        while b"\n\n" in buffer:
            frame, buffer = buffer.split(b"\n\n", 1)
            yield frame + b"\n\n"
    if buffer:
        yield buffer


def _has_id(frame: bytes) -> bool:
    return any(line.startswith(b"id:") for line in frame.splitlines())
