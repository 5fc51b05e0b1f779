"""An OpenAI-compatible Chat Completions endpoint on loopback that replays recorded streams;
Gemini's streaming endpoint too (`POST /v1beta/models/M:streamGenerateContent?alt=sse`).

`POST /v1/chat/completions` (with `"stream": true`) answers with the bytes of a real
recorded response, verbatim `text/event-stream` (`data: {...}` chunks, `data: [DONE]`),
one event per write, so the openai SDK and pydantic-ai parse a real stream. The recording
is chosen by the request: after a tool result (`role: tool` last) or with no tools offered,
the text stream; with tools offered, the tool-call stream (or the next name `queue`d).

The recordings (tests/llm/recordings/) are the two streamed responses of pydantic-ai's
cassette `tests/models/cassettes/test_openai/test_run_stream_sync_streams_real_model.yaml`
(github.com/pydantic/pydantic-ai, commit 77c820e245b4007657eb34b2f63109a405d57574),
recorded from api.openai.com (gpt-4o-mini): `tool_call.sse` calls `get_capital` with
`{"country":"UK"}`; `text.sse` says "The capital of the UK is London." in 8 deltas. The
Gemini ones are pydantic-ai's `test_google_streaming_tool_call_thought_signature.yaml`
(recordings/README.md), recorded from generativelanguage.googleapis.com
(gemini-3-pro-preview): `gemini_tool_call.sse` calls `get_country` with no arguments;
`gemini_text.sse` answers its result, "Mexico".

It is a stdlib HTTP server in a thread, so it serves whatever event loop (or worker
process thread) calls it. Every request is recorded for tests to assert on. A test may make
the next response fail (`fail`: an HTTP error, or the stream cut mid-body as a dropped
connection is) or hold it mid-stream (`pause`) until the test has seen what it streamed.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

RECORDINGS = Path(__file__).resolve().parent / "recordings"
TEXT = "text"
TOOL_CALL = "tool_call"
TEXT_REPLY = "The capital of the UK is London."
"""What `text.sse` says."""
TOOL_NAME, TOOL_ARGS = "get_capital", {"country": "UK"}
"""What `tool_call.sse` calls."""
GEMINI_TEXT = "gemini_text"
GEMINI_TOOL_CALL = "gemini_tool_call"
GEMINI_TEXT_REPLY = "The capital of Mexico is Mexico City."
"""What `gemini_text.sse` says, in 3 events."""
GEMINI_TOOL_NAME = "get_country"
"""What `gemini_tool_call.sse` calls, with no arguments."""
GEMINI_PATH = re.compile(r"/v1beta/models/[\w.-]+:streamGenerateContent")
"""Gemini's streaming endpoint (`?alt=sse`), as google-genai's client calls it."""


@dataclass(frozen=True)
class Fault:
    """How a response goes wrong: an HTTP `status` (an OpenAI error body, no stream), or the
    stream cut after `events` of its events: HTTP/1.1 chunked, the connection closed with no
    last chunk, which the client reads as a dropped connection (httpx's `RemoteProtocolError`),
    not as the stream's end."""

    status: int | None = None
    events: int | None = None


def recording(name: str) -> bytes:
    return (RECORDINGS / f"{name}.sse").read_bytes()


def events(stream: bytes) -> list[bytes]:
    """The SSE events of a recording, each with its blank line as recorded (OpenAI's `\\n\\n`,
    Gemini's `\\r\\n\\r\\n`)."""
    return [event for event in re.findall(rb".+?(?:\r\n\r\n|\n\n)", stream, re.S) if event.strip()]


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    replayed: str | None
    """The recording sent back (None: the request was refused)."""
    sent_all: bool | None = None
    """Whether the whole recording was written: None while it streams, False when the client
    closed the connection first (it stopped reading: a cancelled request)."""


@dataclass
class OpenAIReplay:
    """The server's state: what it was asked, what it will answer next."""

    base_url: str = ""
    requests: list[Received] = field(default_factory=list)
    queued: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    event_gap: float = 0.0
    """Seconds between the stream's events, as a provider paces its tokens (0: at once)."""
    faults: list[Fault] = field(default_factory=list)
    pauses: list[tuple[int, threading.Event]] = field(default_factory=list)

    def queue(self, *names: str) -> None:
        """Answer the next requests with these recordings, in order, whatever they ask."""
        with self.lock:
            self.queued.extend(names)

    def fail(self, *faults: Fault) -> None:
        """The next streamed responses go wrong so, one each, in order."""
        with self.lock:
            self.faults.extend(faults)

    def pause(self, after: int) -> threading.Event:
        """The next streamed response stops after `after` events until the returned event is
        set (or a minute passes)."""
        resume = threading.Event()
        with self.lock:
            self.pauses.append((after, resume))
        return resume

    def take(self, items: list[Any]) -> Any:
        with self.lock:
            return items.pop(0) if items else None

    def choose(self, body: dict[str, Any]) -> str:
        with self.lock:
            if self.queued:
                return self.queued.pop(0)
        if "contents" in body:  # Gemini's: text once a function's response is in
            parts = (body["contents"] or [{}])[-1].get("parts") or []
            answered = any("functionResponse" in part for part in parts)
            return GEMINI_TEXT if answered or not body.get("tools") else GEMINI_TOOL_CALL
        messages = body.get("messages") or [{}]
        if messages[-1].get("role") == "tool" or not body.get("tools"):
            return TEXT
        return TOOL_CALL


def _handler(replay: OpenAIReplay) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        # HTTP/1.0: the stream ends when the connection closes (no length, no chunking).
        protocol_version = "HTTP/1.0"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            headers = {k.lower(): v for k, v in self.headers.items()}
            path = self.path.partition("?")[0]
            gemini = GEMINI_PATH.fullmatch(path) is not None
            if not gemini and (
                path.rstrip("/") != "/v1/chat/completions" or not body.get("stream")
            ):
                replay.requests.append(Received(self.path, headers, body, None))
                self._refuse("only streamed chat completions and Gemini streams are recorded")
                return
            fault: Fault = replay.take(replay.faults) or Fault()
            if fault.status is not None:
                replay.requests.append(Received(self.path, headers, body, None))
                self._refuse("the server had an error", fault.status, "server_error")
                return
            name = replay.choose(body)
            received = Received(self.path, headers, body, name)
            replay.requests.append(received)
            cut = fault.events is not None
            if cut:
                self.protocol_version = "HTTP/1.1"  # chunked: a cut body is an error
                self.close_connection = True
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            if cut:
                self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                pause = replay.take(replay.pauses)
                received.sent_all = _write(self.wfile, name, fault.events, pause, replay.event_gap)
            except (BrokenPipeError, ConnectionResetError):
                received.sent_all = False

        def _refuse(
            self, message: str, status: int = 400, kind: str = "invalid_request_error"
        ) -> None:
            error = {"error": {"message": message, "type": kind}}
            data = json.dumps(error).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the test asserts on `requests` instead."""

    return Handler


def _write(
    out: Any,
    name: str,
    cut_after: int | None,
    pause: tuple[int, threading.Event] | None,
    gap: float,
) -> bool:
    """Write the recording's events (as HTTP chunks when it is to be cut); whether all were."""
    for sent, event in enumerate(events(recording(name)), start=1):
        out.write(event if cut_after is None else b"%x\r\n%s\r\n" % (len(event), event))
        out.flush()
        if pause is not None and sent == pause[0]:
            pause[1].wait(60)
        if sent == cut_after:
            return False  # the connection closes with no last chunk
        time.sleep(gap)
    return True


def serve() -> tuple[OpenAIReplay, ThreadingHTTPServer]:
    replay = OpenAIReplay()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(replay))
    server.daemon_threads = True
    replay.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    threading.Thread(target=server.serve_forever, name="openai-replay", daemon=True).start()
    return replay, server


@pytest.fixture
def openai_replay_server() -> Iterator[OpenAIReplay]:
    """A replaying endpoint for one test: `.base_url` for `OPENAI_BASE_URL`, `.requests`."""
    replay, server = serve()
    try:
        yield replay
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def openai_replay(openai_replay_server: OpenAIReplay) -> str:
    """The base URL (`http://127.0.0.1:PORT/v1`) of a replaying endpoint, for `OPENAI_BASE_URL`."""
    return openai_replay_server.base_url
