"""The gateway's HTTP/1.1 connections: a request head bounded in size and in time.

uvicorn's httptools protocol puts no bound on a request head: the parser keeps a header
that has not ended in memory however long it grows, and a connection that never finishes
(or never starts) its head stays open for good. `http_protocol(settings)` is that protocol
(uvicorn's `http=`) with two bounds:

- `MAX_HEADER_BYTES`: a head over it is answered `431` (JSON, `Connection: close`) as soon
  as that many bytes of it arrived, without waiting for its end.
- `HEADER_TIMEOUT`: a connection that has not sent a whole head this long after it opened,
  or after its previous response ended (keep-alive), is closed (`408` if a head had begun).
  A request's body and its response are not timed: an event stream lasts as long as its run.

A head the parser refuses is a `400` in JSON too (uvicorn's own is plain text).
"""

from __future__ import annotations

import asyncio
import json
from typing import ClassVar

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from ag_ui_temporal.settings import Settings

LINGER_BYTES = 1 << 20
"""Most bytes read (and dropped) after a 431 before closing: a client that writes its whole
head before reading still reads the answer, not a reset (closing on unread bytes resets)."""


class BoundedHead(HttpToolsProtocol):
    """uvicorn's httptools protocol with a bounded request head (set by `http_protocol`)."""

    max_head_bytes: ClassVar[int]
    head_timeout: ClassVar[float]

    _head_timer: asyncio.TimerHandle | None = None
    _head_bytes: int | None = None
    """Bytes of the head being read (None: none is being read)."""
    _head_began_here = False
    """The head began in the chunk being parsed, which may also end the previous request:
    that chunk is not counted (so the bound is `max_head_bytes` plus at most one read)."""
    _refused: int | None = None
    """After a 431: bytes read and dropped since."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]  # uvicorn's is narrower
        self._time_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._untime_head()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused is not None:
            self._refused += len(data)
            if self._refused > LINGER_BYTES:
                self.transport.close()
            return
        super().data_received(data)
        if self._head_bytes is None or self._refused is not None:
            return
        if self._head_began_here:
            self._head_began_here = False
        else:
            self._head_bytes += len(data)
        if self._head_bytes > self.max_head_bytes:
            self._refuse_head()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head_bytes, self._head_began_here = 0, True

    def on_headers_complete(self) -> None:
        if self._refused is not None:
            return
        self._head_bytes = None
        self._untime_head()
        size = len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)
        if size > self.max_head_bytes:
            self._refuse_head()
            return
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if self._refused is None:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if self._refused is None:
            super().on_message_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # Waiting for the next head (not already running a pipelined request): time it.
        if not self.transport.is_closing() and self.cycle.response_complete:
            self._time_head()

    def send_400_response(self, msg: str) -> None:
        """What the parser refused (a malformed head), in JSON as every other refusal."""
        self._answer(400, msg)
        self.transport.close()

    def _time_head(self) -> None:
        self._untime_head()
        self._head_timer = self.loop.call_later(self.head_timeout, self._head_timed_out)

    def _untime_head(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing():
            return
        if self._head_bytes is not None and self._refused is None:  # a head began: say why
            detail = f"no whole request head within {self.head_timeout:g} s (HEADER_TIMEOUT)"
            self._answer(408, detail)
        self.transport.close()

    def _refuse_head(self) -> None:
        self._answer(431, f"request head over {self.max_head_bytes} bytes (MAX_HEADER_BYTES)")
        self._refused = 0
        if self.transport.can_write_eof():
            self.transport.write_eof()  # the client reads the answer, then the end
        self._time_head()  # lingers at most this long, dropping what comes

    def _answer(self, status: int, detail: str) -> None:
        """A JSON answer that ends the connection, written before any app sees the request."""
        body = json.dumps({"detail": detail}).encode()
        defaults = b"".join(n + b": " + v + b"\r\n" for n, v in self.server_state.default_headers)
        head = b"content-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n"
        self.transport.write(STATUS_LINE[status] + defaults + head % len(body) + b"\r\n" + body)


def http_protocol(settings: Settings) -> type[asyncio.Protocol]:
    """uvicorn's `http=` for the gateway: `BoundedHead` with the settings' bounds."""

    class Protocol(BoundedHead):
        max_head_bytes = settings.max_header_bytes
        head_timeout = settings.header_timeout.total_seconds()

    return Protocol
