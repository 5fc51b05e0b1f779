"""Hypothesis against `POST /agents/{agent}`: any body, valid or mangled, on a thread whose
interrupts are open. Never a 5xx, never a stack trace, never a changed thread on rejection.

A 200 is a well-formed AG-UI stream that finishes, or `RUN_STARTED` + `RUN_ERROR` with a
known code. A body that happens to be a correct resume is accepted; the next examples
then use a fresh thread, so every example meets open interrupts.

Strings also grow to the configured maxima (and one past them), from units that once made
a regex stall a process; no request may take much longer than a plain one (`Pace`).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx
from ag_ui.core import EventType
from hypothesis import example, given
from hypothesis import strategies as st
from temporalio.client import Client

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import ErrorCode
from tests.agui import STREAMS, interrupts, parse_frame, run, thread_state, user
from tests.fuzz.conftest import FUZZ

EMAILS = "Send emails to ada@example.com and bob@example.com"
EVENT_TYPES = {t.value for t in EventType}
CODES = {c.value for c in ErrorCode}
STACK_TRACE = ("Traceback (most recent call last)", 'File "/')

# -- what is sent ---------------------------------------------------------------------

odd_text = st.text(max_size=40) | st.text(
    st.characters(categories=["Cs", "Co", "Cc", "Zl", "So", "Mn"]), max_size=40
)  # lone surrogates, private use, controls, separators, emoji, combining marks
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | odd_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(odd_text, inner, max_size=3),
    max_leaves=12,
)
KNOWN = "known"
"""Stands for the id of one of the thread's open interrupts (filled in per example)."""
FRESH = "fresh"
"""Stands for a thread id never used before: the agent reads the message (no open interrupts)."""
GROWN_UNITS = [
    *["a", "é", "Send an email to a", "a@", "saying ", "reimburse 1 ", "token=x", "\ud800"],
    "email a@b.c ",
]
"""Repeated up to a limit: each once stalled (or would stall) a quadratic regex, or (the
last) asked for a tool call per address, thousands in one response."""


def grown(limit: int) -> st.SearchStrategy[str]:
    """A string of exactly `limit` characters, or one more (refused), of one unit repeated."""
    return st.tuples(st.sampled_from(GROWN_UNITS), st.sampled_from([limit, limit + 1])).map(
        lambda unit_length: (unit_length[0] * unit_length[1])[: unit_length[1]]
    )


def message(limits: Settings) -> st.SearchStrategy[Any]:
    good = st.fixed_dictionaries(
        {
            "id": st.uuids().map(str) | odd_text,
            "role": st.sampled_from(["user", "assistant", "system", "boss"]),
        },
        optional={
            "content": odd_text | json_values | grown(limits.max_string_length),
            "name": odd_text,
        },
    )
    return good | good | json_values


def resume_entry(limits: Settings) -> st.SearchStrategy[Any]:
    # near the payload size limit, with a format to check (`to` is an email)
    edited = grown(limits.max_payload_bytes // 2).map(
        lambda text: {"approved": True, "editedArgs": {"to": text, "body": text[:100]}}
    )
    good = st.fixed_dictionaries(
        {
            "interruptId": st.just(KNOWN) | st.just(KNOWN) | odd_text,
            "status": st.sampled_from(["resolved", "cancelled", "resolved", "maybe"]) | json_values,
        },
        optional={
            "payload": json_values
            | st.just({"approved": True})
            | st.just({"approved": False})
            | edited,
            "metadata": st.dictionaries(odd_text, json_values, max_size=3) | json_values,
        },
    )
    return good | good | json_values


def bodies(limits: Settings) -> st.SearchStrategy[Any]:
    fields = st.fixed_dictionaries(
        {},
        optional={
            "threadId": st.just("THREAD") | odd_text | json_values | grown(limits.max_id_length),
            "runId": odd_text | json_values,
            "parentRunId": odd_text | json_values,
            "messages": st.lists(message(limits), max_size=3) | json_values,
            "resume": st.lists(resume_entry(limits), max_size=4) | json_values,
            "state": json_values,
            "tools": st.lists(json_values, max_size=2) | json_values,
            "context": st.lists(json_values, max_size=2) | json_values,
            "forwardedProps": json_values,
        },
    )
    unknown = st.dictionaries(odd_text, json_values, max_size=2)
    mangled = st.tuples(unknown, fields).map(lambda both: {**both[0], **both[1]})
    # Mostly well-typed, so most examples reach the workflow's contract rules.
    plausible = st.fixed_dictionaries(
        {
            "threadId": st.sampled_from(["THREAD", "THREAD", FRESH]),
            "runId": st.uuids().map(str) | odd_text | grown(limits.max_id_length),
            "messages": st.lists(message(limits), max_size=2),
        },
        optional={"resume": st.lists(resume_entry(limits), max_size=3), "state": json_values},
    )
    return plausible | plausible | mangled | json_values


# -- the thread the bodies are sent to --------------------------------------------------


@dataclass
class Target:
    """A thread with two open interrupts, replaced once a body resolved them."""

    http: httpx.AsyncClient
    base: str
    count: int = 0
    thread_id: str = ""
    open_ids: list[str] = field(default_factory=list)

    async def fresh(self) -> None:
        self.count += 1
        self.thread_id = f"{self.base}-{self.count}"
        self.open_ids = [
            i["id"] for i in interrupts(await run(self.http, self.thread_id, text=EMAILS))
        ]


PACE_RATIO = 20
PACE_FLOOR = 3.0
"""Seconds. A request may take 20x a plain one (median of three, measured in the same test),
and at least this: grown strings legitimately cost parsing and copying. The stalls this
catches took 13 s and more (a 60K-character message: 27 s)."""


@dataclass
class Pace:
    """No request is much slower than a plain run (one short message on a new thread)."""

    http: httpx.AsyncClient
    base: str
    plain: float = 0.0

    async def measure(self) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            await run(self.http, f"{self.base}-plain-{uuid.uuid4().hex[:8]}", text="hi")
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    def bound(self) -> float:
        return max(PACE_RATIO * self.plain, PACE_FLOOR)

    async def check(self, elapsed: float, body: Any) -> None:
        if elapsed <= self.bound():
            return
        # A stall repeats; a busy machine slows plain runs too: measure again before failing.
        self.plain = max(self.plain, await self.measure())
        assert elapsed <= self.bound(), (elapsed, self.plain, str(body)[:300])


def aimed(body: Any, target: Target, known: int) -> Any:
    """The body with its placeholders replaced by the target's thread and interrupt ids."""
    if not isinstance(body, dict):
        return body
    body = dict(body)
    if body.get("threadId") == "THREAD" or "threadId" not in body:
        body["threadId"] = target.thread_id
    elif body["threadId"] == FRESH:
        body["threadId"] = f"{target.base}-new-{uuid.uuid4().hex[:8]}"
    resume = body.get("resume")
    if isinstance(resume, list):
        body["resume"] = [
            {**e, "interruptId": target.open_ids[(known + n) % 2]}
            if isinstance(e, dict) and e.get("interruptId") == KNOWN
            else e
            for n, e in enumerate(resume)
        ]
    return body


# -- what comes back --------------------------------------------------------------------


def sse_events(text: str) -> list[dict[str, Any]]:
    """Every frame parses; every data frame is one AG-UI event."""
    events = []
    for raw in text.replace("\r\n", "\n").split("\n\n"):
        if not raw.strip():
            continue
        frame = parse_frame(raw)
        assert frame.data is not None or frame.comment is not None, raw
        if frame.data is not None:
            assert frame.data.get("type") in EVENT_TYPES, frame.data
            events.append(frame.data)
    return events


def accepted(response: httpx.Response) -> bool:
    """Check the answer's shape; whether the run was applied."""
    assert response.status_code < 500, response.text
    assert not any(marker in response.text for marker in STACK_TRACE), response.text
    if response.status_code != 200:
        assert response.headers["content-type"].startswith("application/json")
        assert "detail" in response.json()
        return False
    events = sse_events(response.text)
    STREAMS.append(events)
    assert events and events[0]["type"] == "RUN_STARTED", events
    if events[-1]["type"] == "RUN_ERROR":
        assert [e["type"] for e in events] == ["RUN_STARTED", "RUN_ERROR"], events
        assert events[-1]["code"] in CODES, events[-1]
        return False
    assert events[-1]["type"] == "RUN_FINISHED", events[-1]
    return True


async def test_any_body_is_answered_cleanly(
    http: httpx.AsyncClient, client: Client, thread_id: str, settings: Settings
):
    """Hypothesis runs in a worker thread (it drives examples synchronously); each example's
    requests run on this session loop, where the gateway and the Temporal client live."""
    loop = asyncio.get_running_loop()
    target = Target(http, thread_id)
    await target.fresh()
    pace = Pace(http, thread_id)
    pace.plain = await pace.measure()
    longest = settings.max_string_length
    email_to_a = "Send an email to " + "a" * (longest - 17)  # the report: 60K held the GIL 27 s
    many_calls = ("email " + "a@b.c " * longest)[:longest]  # a call per address: a task's deadlock

    @FUZZ
    @given(body=bodies(settings), known=st.integers(0, 1))
    @example(body={"threadId": FRESH, "runId": "r", "messages": [user(email_to_a)]}, known=0)
    @example(body={"threadId": FRESH, "runId": "r", "messages": [user("é" * longest)]}, known=0)
    @example(body={"threadId": FRESH, "runId": "r", "messages": [user(email_to_a + "a")]}, known=0)
    @example(body={"threadId": FRESH, "runId": "r", "messages": [user(many_calls)]}, known=0)
    @example(body={"threadId": "THREAD", "runId": "r\ud800", "messages": []}, known=0)
    @example(body={"runId": "r", "messages": [], "resume": [{"interruptId": KNOWN}]}, known=0)
    @example(body={"runId": "r", "messages": [], "resume": [RESOLVE_KNOWN] * 2}, known=0)
    @example(
        body={
            "runId": "r",
            "messages": [],
            "resume": [RESOLVE_KNOWN, {**RESOLVE_KNOWN, "interruptId": "x"}],
        },
        known=0,
    )
    def check(body: Any, known: int) -> None:
        sent = send_one(http, client, target, aimed(body, target, known), pace)
        asyncio.run_coroutine_threadsafe(sent, loop).result()

    await asyncio.to_thread(check)


RESOLVE_KNOWN = {"interruptId": KNOWN, "status": "resolved", "payload": {"approved": False}}
UNKNOWN = {**RESOLVE_KNOWN, "interruptId": "int-nope"}


async def send_one(
    http: httpx.AsyncClient, client: Client, target: Target, body: Any, pace: Pace
) -> None:
    before = await thread_state(client, target.thread_id)
    content = json.dumps(body).encode()  # ensure_ascii: lone surrogates travel as \ud800
    start = time.perf_counter()
    response = await http.post(
        "/agents/assistant", content=content, headers={"content-type": "application/json"}
    )
    await pace.check(time.perf_counter() - start, body)
    if accepted(response):
        if isinstance(body, dict) and body.get("threadId") == target.thread_id:
            await target.fresh()
        return
    assert await thread_state(client, target.thread_id) == before, body
