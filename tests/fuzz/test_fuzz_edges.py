"""Hypothesis at the input's edges, against the real gateway on a real port: odd and large
request headers (on a raw socket: bytes no client library sends), ids measured in bytes
(multi-byte characters up to and past each limit) and numbers JSON has not (NaN, Infinity,
1e400). Each gets a 4xx with a JSON body, or a proper run: never a 5xx, never a hang, never
`UNAVAILABLE` (which tells a client to retry for good)."""

from __future__ import annotations

import asyncio
import json
import socket
import urllib.parse
from http.client import HTTPResponse
from typing import Any

import httpx
from hypothesis import example, given
from hypothesis import strategies as st
from temporalio.client import Client

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract.names import (
    MAX_RUN_ID_BYTES,
    MAX_THREAD_ID_BYTES,
    TEMPORAL_ID_BYTES,
    indexed_size,
)
from tests.agui import STREAMS, new_id, run, thread_state, user
from tests.fuzz.conftest import FUZZ
from tests.fuzz.test_fuzz_runs import accepted, sse_events

TIMEOUT = 60
"""Seconds a request may take before the test calls it a hang (a liveness bound)."""

# -- headers ----------------------------------------------------------------------------

FRAMING = {b"content-length", b"transfer-encoding", b"connection", b"expect", b"host"}
"""Headers that frame the request itself: the test sends its own (an odd Content-Length
would be the test's lie about its body, not the gateway's to answer)."""
NAMES = [
    b"Last-Event-ID",
    b"X-Principal",
    b"X-Principal-Groups",
    b"X-Run-Id",
    b"Content-Type",
    b"Authorization",
    b"X-API-Key",
    b"Origin",
    b"Accept",
    b"Cookie",
    b"X-Forwarded-For",
]
header_names = st.sampled_from(NAMES) | st.binary(min_size=1, max_size=12).filter(
    lambda name: b"\r" not in name and b"\n" not in name and name.lower() not in FRAMING
)


def header_values(limit: int) -> st.SearchStrategy[bytes]:
    """Any bytes but a line break; and values near, at and far past `MAX_HEADER_BYTES`."""
    odd = st.binary(max_size=40).filter(lambda v: b"\r" not in v and b"\n" not in v)
    sizes = st.sampled_from([limit // 2, limit - 200, limit + 1, 4 * limit, 1 << 20])
    grown = st.tuples(st.sampled_from([b"a", "é".encode(), "😀".encode(), b"\xb2"]), sizes)
    return odd | odd | grown.map(lambda unit_size: (unit_size[0] * unit_size[1])[: unit_size[1]])


def raw_request(
    url: str, method: str, target: str, headers: list[tuple[bytes, bytes]], body: bytes
):
    """One request on a socket of its own; the answer as (status, content type, body)."""
    parts = urllib.parse.urlsplit(url)
    lines = [f"{method} {target} HTTP/1.1".encode(), b"Host: gateway", b"Connection: close"]
    lines += [name + b": " + value for name, value in headers]
    if body:
        lines += [b"Content-Type: application/json", b"Content-Length: %d" % len(body)]
    with socket.create_connection((parts.hostname, parts.port), timeout=TIMEOUT) as sock:
        try:
            sock.sendall(b"\r\n".join(lines) + b"\r\n\r\n" + body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # answered (and closed) before the whole head was read: read the answer
        response = HTTPResponse(sock)
        response.begin()
        return response.status, response.getheader("content-type", ""), response.read()


async def test_odd_headers_are_answered_cleanly(
    http: httpx.AsyncClient, settings: Settings, thread_id: str
):
    url = str(http.base_url)
    run_id = (await run(http, thread_id, text="hello"))[0]["runId"]
    routes = [
        ("GET", "/healthz"),
        ("GET", f"/agents/assistant?threadId={thread_id}"),
        ("GET", f"/agents/assistant?runId={run_id}&threadId={thread_id}&offset=-1"),
        ("POST", "/agents/assistant"),
    ]

    @FUZZ
    @given(
        route=st.sampled_from(routes),
        headers=st.lists(
            st.tuples(header_names, header_values(settings.max_header_bytes)), max_size=3
        ),
    )
    @example(route=routes[3], headers=[(b"Last-Event-ID", "²".encode("latin-1"))])
    @example(route=routes[2], headers=[(b"Last-Event-ID", b"\xc2\xb2")])
    @example(route=routes[0], headers=[(b"X-Big", b"a" * (1 << 20))])
    @example(route=routes[3], headers=[(b"X-Principal", b"\x00")])
    def check(route: tuple[str, str], headers: list[tuple[bytes, bytes]]) -> None:
        method, target = route
        body = b""
        if method == "POST":
            sent = {"threadId": new_id("hdr"), "runId": new_id(), "messages": [user("hi")]}
            body = json.dumps(sent).encode()
        status, content_type, answer = raw_request(url, method, target, headers, body)
        assert status < 500, (status, answer[:300])
        if status >= 400:
            assert content_type == "application/json", (status, answer[:300])
            assert "detail" in json.loads(answer)
        elif content_type.startswith("text/event-stream"):
            events = sse_events(answer.decode())
            STREAMS.append(events)
            assert events[0]["type"] == "RUN_STARTED"
            assert events[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR"), events[-1]
            assert events[-1].get("code") != "UNAVAILABLE", events[-1]
        else:
            json.loads(answer)  # hydrate, healthz

    await asyncio.to_thread(check)


# -- ids in bytes -----------------------------------------------------------------------

ID_FIELDS = ["threadId", "runId", "parentRunId", "messageId", "interruptId"]
UNITS = ["a", "é", "€", "😀", "\x00"]
"""One to four bytes of UTF-8 (and a NUL, which JSON escapes and Temporal may not take)."""


def ids(limits: Settings) -> st.SearchStrategy[tuple[str, str]]:
    """(field, id): `unit` repeated to about each bound, in bytes, one under, at and over."""
    bounds = [limits.max_id_length, MAX_RUN_ID_BYTES, MAX_THREAD_ID_BYTES, TEMPORAL_ID_BYTES]
    sizes = st.sampled_from(bounds).flatmap(lambda b: st.sampled_from([b - 1, b, b + 1, b + 4]))
    grown = st.tuples(st.sampled_from(UNITS), sizes).map(
        lambda unit_size: unit_size[0] * max(1, unit_size[1] // len(unit_size[0].encode()))
    )
    return st.tuples(st.sampled_from(ID_FIELDS), grown)


def refused(field: str, value: str, limits: Settings) -> bool:
    """The rule, said again independently: bytes of UTF-8, and a run id's indexed size."""
    if len(value.encode()) > limits.max_id_length:
        return True
    return field == "runId" and indexed_size(value) > MAX_RUN_ID_BYTES


async def test_ids_are_measured_in_bytes(http: httpx.AsyncClient, settings: Settings):
    loop = asyncio.get_running_loop()

    @FUZZ
    @given(field_and_id=ids(settings))
    @example(field_and_id=("threadId", "😀" * 256))  # within 256 characters, 1024 bytes
    @example(field_and_id=("runId", "😀" * 64))  # 256 bytes, 768 as a search attribute
    @example(field_and_id=("runId", "r" * MAX_RUN_ID_BYTES))
    def check(field_and_id: tuple[str, str]) -> None:
        field, value = field_and_id
        sent = asyncio.run_coroutine_threadsafe(send_with_id(http, field, value), loop)
        response = sent.result()
        if refused(field, value, settings):
            assert response.status_code == 422, (field, len(value.encode()), response.text[:300])
            assert "MAX_ID_LENGTH" in response.text or "search attribute" in response.text
            return
        assert response.status_code == 200, (field, len(value.encode()), response.text[:300])
        events = sse_events(response.text)
        STREAMS.append(events)
        assert events[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR"), events[-1]
        assert events[-1].get("code") != "UNAVAILABLE", (field, value[:20], events[-1])

    await asyncio.to_thread(check)


async def send_with_id(http: httpx.AsyncClient, field: str, value: str) -> httpx.Response:
    message = user("hello")
    body: dict[str, Any] = {"threadId": new_id("ids"), "runId": new_id(), "messages": [message]}
    if field == "messageId":
        message["id"] = value
    elif field == "interruptId":
        body["resume"] = [{"interruptId": value, "status": "cancelled"}]
        body["messages"] = []
    else:
        body[field] = value
    return await http.post("/agents/assistant", json=body)


# -- numbers JSON has not ---------------------------------------------------------------

NOT_NUMBERS = ["NaN", "Infinity", "-Infinity", "1e400", "-1e999", "1" + "0" * 400]
"""Python's JSON takes the first three, reads the next two as infinities and the last as an
integer no double holds; none is a number every JSON reader takes."""
PLACE = "@@number@@"
WHERE = ["state", "forwardedProps", "payload", "tool parameters", "tool result"]


def nested(depth: int) -> st.SearchStrategy[Any]:
    """`PLACE` somewhere inside up to `depth` lists and objects."""
    inner: st.SearchStrategy[Any] = st.just(PLACE)
    for _ in range(depth):
        inner = st.one_of(
            st.tuples(inner, st.integers()).map(lambda pair: [pair[1], pair[0]]),
            st.tuples(st.text(max_size=5), inner).map(lambda pair: {pair[0]: pair[1], "k": 1}),
        )
    return inner


def body_with(where: str, value: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"threadId": new_id("nan"), "runId": new_id(), "messages": []}
    if where in ("state", "forwardedProps"):
        body[where] = value
    elif where == "payload":
        body["resume"] = [{"interruptId": "int-x", "status": "resolved", "payload": value}]
    elif where == "tool parameters":
        body["tools"] = [{"name": "t", "description": "d", "parameters": value}]
    else:  # a frontend tool's result: JSON as text, read by agents and hydrate
        text = json.dumps(value)
        body["messages"] = [{"id": "m", "role": "tool", "toolCallId": "c", "content": text}]
    return body


async def test_numbers_json_has_not_are_refused(http: httpx.AsyncClient, client: Client):
    loop = asyncio.get_running_loop()

    @FUZZ
    @given(
        where=st.sampled_from(WHERE),
        value=st.integers(0, 3).flatmap(nested),
        number=st.sampled_from([*NOT_NUMBERS, "1e308", "-0.0"]),
    )
    def check(where: str, value: Any, number: str) -> None:
        body = body_with(where, value)
        content = json.dumps(body)
        placed = json.dumps(PLACE)
        # the token as JSON text: in the body's own JSON, or in the tool result's JSON text
        content = content.replace(placed, number).replace(json.dumps(placed)[1:-1], number)
        sent = asyncio.run_coroutine_threadsafe(post(http, content.encode()), loop)
        response = sent.result()
        if number in NOT_NUMBERS:
            assert response.status_code == 422, (where, number, response.text[:300])
            assert "NaN, Infinity" in response.json()["detail"]
            created = asyncio.run_coroutine_threadsafe(exists(client, body["threadId"]), loop)
            assert not created.result()
        else:  # finite, if large: a run (or its refusal), as for any number
            accepted(response)

    await asyncio.to_thread(check)


async def post(http: httpx.AsyncClient, content: bytes) -> httpx.Response:
    headers = {"content-type": "application/json"}
    return await http.post("/agents/assistant", content=content, headers=headers)


async def exists(client: Client, thread_id: str) -> bool:
    try:
        await thread_state(client, thread_id)
    except Exception:  # not found: nothing was started
        return False
    return True
