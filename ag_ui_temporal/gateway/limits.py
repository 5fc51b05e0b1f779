"""Limits with clear answers, before any stream starts.

`BodyLimit` answers `413` to a request body over `MAX_BODY_BYTES`, whether it
announces its length or comes chunked (it is counted while read, never kept past
the limit). The rest of an over-size body is read and discarded (up to
`DRAIN_BYTES`, for up to `DRAIN_SECONDS`) before answering, so a client that writes
its whole body before reading (urllib, curl) reads the 413 instead of a connection
reset; beyond those bounds the server answers and closes.

`PrincipalLimits` bounds each principal's open event streams and runs (and joins) a
minute (`429` with `Retry-After`); `LinkLimits` the requests of each decision link and of
each client address to them a minute. The parsed input's limits (`422`) are in
`input_limits.py`, the request head's (`431`) in `server.py`. All bodies are FastAPI's
`{"detail": ...}`.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ag_ui_temporal.gateway.deps import PrincipalDep
from ag_ui_temporal.settings import Settings

BODYLESS = frozenset({"GET", "HEAD", "OPTIONS"})
DRAIN_BYTES = 64 << 20
"""Most of an over-size body read (and discarded) so that its client hears the 413."""
DRAIN_SECONDS = 10.0
"""Longest time spent draining one over-size body (a slow writer is cut off)."""


class BodyLimit:
    """Pure ASGI: read the body up to `max_bytes`, then hand it to the app; 413 beyond."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in BODYLESS:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > self.max_bytes:
            # Refused without keeping a byte. A client waiting for `100 Continue` sends
            # nothing more, and one announcing more than we would drain is not waited for.
            if "100-continue" not in headers.get("expect", "").lower():
                await _drain(receive, int(length))
            await self._too_large(scope, receive, send)
            return
        body = await self._read(receive)
        if body is None:
            await _drain(receive, DRAIN_BYTES)
            await self._too_large(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    async def _read(self, receive: Receive) -> bytes | None:
        """The whole body, or None as soon as it grows past the limit."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"".join(chunks)  # the client left; the app sees the disconnect
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        detail = f"request body over {self.max_bytes} bytes (MAX_BODY_BYTES)"
        await JSONResponse({"detail": detail}, status_code=413)(scope, receive, send)


async def _drain(receive: Receive, length: int) -> None:
    """Read and discard the rest of the body (if it is at most `DRAIN_BYTES`, for at most
    `DRAIN_SECONDS`): the server answers only after reading it, since once the answer is
    sent it closes the connection, and closing on unread bytes resets it mid-upload."""
    if length > DRAIN_BYTES:
        return
    size = 0
    try:
        async with asyncio.timeout(DRAIN_SECONDS):
            while size <= DRAIN_BYTES:
                message = await receive()
                size += len(message.get("body", b""))
                if message["type"] != "http.request" or not message.get("more_body", False):
                    return
    except TimeoutError:
        return


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that yields the buffered body once, then the client's own messages
    (so a streaming response still hears the disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


# -- requests a minute, per key: a token bucket each ---------------------------------

TRACKED_PRINCIPALS = 10_000
"""Principals whose run rate is remembered; the least recently seen is forgotten first."""
TRACKED_KEYS = 10_000
"""Keys (links, addresses) a rate remembers; the least recently seen is forgotten first."""
STREAM_RETRY_AFTER = 5
"""Seconds a client over its stream limit is told to wait (when a stream ends is unknown)."""


@dataclass
class _Bucket:
    tokens: float
    at: float


class Rate:
    """`per_minute` requests a key a minute (bursts up to that many), in this process, O(1) a
    request and bounded in memory: a token bucket per key, refilled continuously. A bucket
    left alone for a minute is full, as good as a new one, so it is forgotten; at most
    `tracked` are kept (the least recently used goes first: many keys at once cost memory
    for `tracked` of them, and an evicted key starts over with a full bucket)."""

    def __init__(
        self,
        per_minute: int,
        tracked: int = TRACKED_KEYS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.capacity, self.tracked, self.clock = per_minute, tracked, clock
        self.rate = per_minute / 60  # tokens a second
        self.buckets: OrderedDict[str, _Bucket] = OrderedDict()  # least recently used first

    def take(self, key: str) -> float | None:
        """None if `key` may go on now (counted); else the seconds until it may."""
        now = self.clock()
        self._forget_full(now)
        bucket = self.buckets.pop(key, None) or _Bucket(self.capacity, now)
        bucket.tokens = min(self.capacity, bucket.tokens + (now - bucket.at) * self.rate)
        bucket.at = now
        self.buckets[key] = bucket
        if len(self.buckets) > self.tracked:
            self.buckets.popitem(last=False)
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return None
        return (1 - bucket.tokens) / self.rate

    def _forget_full(self, now: float) -> None:
        """Drop buckets refilled by now (oldest first: amortized O(1))."""
        while self.buckets:
            oldest = next(iter(self.buckets.values()))
            if oldest.at + self.capacity / self.rate > now:
                return
            self.buckets.popitem(last=False)


# -- per principal: open streams and runs a minute --------------------------------


class PrincipalLimits:
    """Each principal's open streams and runs a minute, in this process, O(1) a request.

    Runs: a `Rate` of `runs_per_minute`. Streams: a count per principal that has one open,
    dropped with its last stream.
    """

    def __init__(
        self,
        max_streams: int,
        runs_per_minute: int,
        tracked: int = TRACKED_PRINCIPALS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_streams = max_streams
        self.runs = Rate(runs_per_minute, tracked, clock)
        self.streams: dict[str, int] = {}

    def take_run(self, principal: str) -> float | None:
        """None if `principal` may run now (counted); else the seconds until it may."""
        return self.runs.take(principal)

    def open_stream(self, principal: str) -> bool:
        count = self.streams.get(principal, 0)
        if count >= self.max_streams:
            return False
        self.streams[principal] = count + 1
        return True

    def close_stream(self, principal: str) -> None:
        count = self.streams.pop(principal, 0) - 1
        if count > 0:
            self.streams[principal] = count


def principal_limits(request: Request) -> PrincipalLimits:
    """The app's limits, made at its first request (from its settings)."""
    limits: PrincipalLimits | None = getattr(request.app.state, "principal_limits", None)
    if limits is None:
        s: Settings = request.app.state.settings
        limits = PrincipalLimits(s.max_streams_per_principal, s.max_runs_per_minute)
        request.app.state.principal_limits = limits
    return limits


# -- decision links: requests a minute, per link and per client address ------------------


class LinkLimits:
    """GETs and POSTs of decision links (`/decisions/{token}`): each reads the thread (a
    `describe` and a query) or decides, so a link opened in a loop, or many links from one
    place, are answered `429` before any of that. Per link: its token's digest (the token
    is the link; a digest keeps each key small whatever the URL holds). Per client address:
    the socket's peer (uvicorn puts the proxy's `X-Forwarded-For` there only for the
    proxies `FORWARDED_ALLOW_IPS` trusts)."""

    def __init__(
        self,
        per_link: int,
        per_address: int,
        tracked: int = TRACKED_KEYS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.links = Rate(per_link, tracked, clock)
        self.addresses = Rate(per_address, tracked, clock)

    def take(self, token: str, address: str) -> float | None:
        """None if a request for link `token` from `address` may go on (counted); else the
        seconds until it may."""
        if (wait := self.addresses.take(address)) is not None:
            return wait
        return self.links.take(hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest())


def link_wait(request: Request, token: str) -> float | None:
    """None if this request for link `token` may go on (counted); else the seconds until it
    may. The app's `LinkLimits` are made at its first link request (from its settings)."""
    limits: LinkLimits | None = getattr(request.app.state, "link_limits", None)
    if limits is None:
        s: Settings = request.app.state.settings
        limits = LinkLimits(s.max_requests_per_link, s.max_link_requests_per_address)
        request.app.state.link_limits = limits
    return limits.take(token, request.client.host if request.client else "")


def retry_after(seconds: float) -> dict[str, str]:
    """The `Retry-After` header of a `429`: whole seconds, at least one."""
    return {"Retry-After": str(max(1, math.ceil(seconds)))}


def too_many(detail: str, seconds: float) -> HTTPException:
    return HTTPException(429, detail, headers=retry_after(seconds))


async def stream_slot(request: Request, principal: PrincipalDep) -> AsyncIterator[None]:
    """Holds one of the principal's stream slots until the response has ended."""
    limits = principal_limits(request)
    if not limits.open_stream(principal.name):
        most = limits.max_streams
        detail = f"{most} event streams already open; at most {most} (MAX_STREAMS_PER_PRINCIPAL)"
        raise too_many(detail, STREAM_RETRY_AFTER)
    try:
        yield
    finally:
        limits.close_stream(principal.name)


async def run_quota(request: Request, principal: PrincipalDep) -> None:
    """Counts a run (any POST, re-attaches too: a re-sent POST may start its run) or a join
    (found or not: it looks the run up, and sends as much as a run)."""
    limits = principal_limits(request)
    if (wait := limits.take_run(principal.name)) is not None:
        detail = f"over {limits.runs.capacity} runs a minute (MAX_RUNS_PER_MINUTE)"
        raise too_many(detail, wait)


StreamSlotDep = Annotated[None, Depends(stream_slot)]
RunQuotaDep = Annotated[None, Depends(run_quota)]
