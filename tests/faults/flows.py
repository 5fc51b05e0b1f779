"""One approval flow, driven over HTTP the way a real AG-UI client drives it, through faults.

A POST whose stream breaks before its terminal event (connection refused or reset, the stream
ending early, a `503`, `RUN_ERROR` `UNAVAILABLE`) is re-sent *unchanged*, with the
`Last-Event-ID` of the last event received: the run id is the update id, so the product must
neither start nor apply the run twice. Any other answer is a failure of the flow.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.agui import Frame, frames, texts

TERMINAL = ("RUN_FINISHED", "RUN_ERROR")
FIRST_BACKOFF = 0.05
MAX_BACKOFF = 1.0
TIMEOUT = httpx.Timeout(connect=2, read=15, write=5, pool=None)
"""The gateway pings every second, so a read silent for 15 s is a stalled stream (re-sent)."""


class FlowError(Exception):
    """An answer a client must not retry: the flow failed."""


@dataclass
class Stats:
    """What the clients went through, summed over every flow."""

    resends: int = 0
    causes: Counter[str] = field(default_factory=Counter)
    """Why POSTs were re-sent: `cut`, `UNAVAILABLE`, `http-503`, transport error names."""
    longest: float = 0.0
    """Seconds of the slowest run, from its first POST to its terminal event."""
    slowest: str = ""


@dataclass
class RunCall:
    """One run as the client knows it: its body, what it got so far, where to re-attach."""

    body: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)
    last_id: int | None = None

    def headers(self) -> dict[str, str]:
        return {} if self.last_id is None else {"Last-Event-ID": str(self.last_id)}

    def take(self, frame: Frame) -> dict[str, Any] | None:
        """Keep the frame's event; return it if it ends the run."""
        if frame.data is None:
            return None  # a keepalive comment
        if frame.id is not None:
            self.last_id = int(frame.id)
        if not _unavailable(frame.data):
            self.events.append(frame.data)
        return frame.data if frame.data["type"] in TERMINAL else None


def _unavailable(event: dict[str, Any]) -> bool:
    return event["type"] == "RUN_ERROR" and event.get("code") == "UNAVAILABLE"


async def post_run(http: httpx.AsyncClient, body: dict[str, Any], stats: Stats) -> list[dict]:
    """POST the run until its terminal event arrives; every event received, in order."""
    call, delay, started = RunCall(body), FIRST_BACKOFF, time.monotonic()
    while True:
        cause = await _attempt(http, call)
        if cause is None:
            if time.monotonic() - started > stats.longest:
                stats.longest, stats.slowest = time.monotonic() - started, body["runId"]
            return call.events
        stats.resends += 1
        stats.causes[cause] += 1
        await asyncio.sleep(delay)  # backoff before the same POST again
        delay = min(delay * 2, MAX_BACKOFF)


async def _attempt(http: httpx.AsyncClient, call: RunCall) -> str | None:
    """One POST; None once the run ended, else why it must be re-sent."""
    try:
        async with http.stream(
            "POST", "/agents/assistant", json=call.body, headers=call.headers()
        ) as response:
            if response.status_code == 503:
                return "http-503"
            if response.status_code != 200:
                text = (await response.aread()).decode(errors="replace")[:300]
                raise FlowError(f"HTTP {response.status_code}: {text}")
            async for frame in frames(response):
                terminal = call.take(frame)
                if terminal is None:
                    continue
                if _unavailable(terminal):
                    return "UNAVAILABLE"
                if terminal["type"] == "RUN_ERROR":
                    raise FlowError(f"RUN_ERROR {terminal.get('code')}: {terminal.get('message')}")
                return None
            return "cut"
    except httpx.TransportError as err:
        return type(err).__name__


@dataclass(eq=False)
class Flow:
    """One thread: ask to send an email to a unique address, then approve the tool call."""

    index: int
    thread_id: str
    start_delay: float
    think: float
    """Seconds between the interrupt and its resume (for flows not held for a kill)."""
    hold_for_kill: int | None = None
    """The kill (1-based) this flow waits for with its interrupt open, then resolves it."""
    phase: str = "waiting"
    tool_call_id: str | None = None
    held_across: str | None = None
    """The process killed while this flow's interrupt was open."""
    result_text: str = ""
    error: str | None = None

    @property
    def address(self) -> str:
        return f"{self.thread_id}@example.com"

    @property
    def run_ids(self) -> tuple[str, str]:
        return f"{self.thread_id}-ask", f"{self.thread_id}-approve"

    def ask_body(self) -> dict[str, Any]:
        text = f"Send an email to {self.address} saying hi"
        message = {"id": f"{self.thread_id}-m1", "role": "user", "content": text}
        return {"threadId": self.thread_id, "runId": self.run_ids[0], "messages": [message]}

    def approve_body(self, interrupt_id: str) -> dict[str, Any]:
        ask, approve = self.run_ids
        resume = {"interruptId": interrupt_id, "status": "resolved", "payload": {"approved": True}}
        return {
            "threadId": self.thread_id,
            "runId": approve,
            "parentRunId": ask,
            "messages": [],
            "resume": [resume],
        }


def tool_call_interrupt(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The one `tool_call` interrupt the first run must end with."""
    outcome = events[-1].get("outcome") or {}
    pending = outcome.get("interrupts") or []
    if outcome.get("type") != "interrupt" or len(pending) != 1:
        raise FlowError(f"expected one interrupt, the run ended with {outcome}")
    if pending[0].get("reason") != "tool_call" or not pending[0].get("toolCallId"):
        raise FlowError(f"expected a tool_call interrupt, got {pending[0]}")
    return pending[0]


def check_sent(flow: Flow, events: list[dict[str, Any]]) -> str:
    """The resumed run's text, once it shows the email sent for the flow's own tool call."""
    outcome = events[-1].get("outcome")
    results = [e["toolCallId"] for e in events if e["type"] == "TOOL_CALL_RESULT"]
    text = texts(events)
    if outcome != {"type": "success"} or results != [flow.tool_call_id]:
        raise FlowError(f"resume ended with {outcome}, tool results {results}")
    if f"Sent the email to {flow.address}" not in text:
        raise FlowError(f"resume said {text!r}")
    return text
