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
    agent: str = "assistant"
    principal: str | None = None
    """Sent as `X-Principal` (the gateway's dev auth); None: anonymous."""
    events: list[dict[str, Any]] = field(default_factory=list)
    last_id: int | None = None

    def headers(self) -> dict[str, str]:
        headers = {} if self.principal is None else {"X-Principal": self.principal}
        if self.last_id is not None:
            headers["Last-Event-ID"] = str(self.last_id)
        return headers

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


async def post_run(
    http: httpx.AsyncClient,
    body: dict[str, Any],
    stats: Stats,
    agent: str = "assistant",
    principal: str | None = None,
) -> list[dict[str, Any]]:
    """POST the run until its terminal event arrives; every event received, in order."""
    call, delay, started = RunCall(body, agent, principal), FIRST_BACKOFF, time.monotonic()
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
            "POST", f"/agents/{call.agent}", json=call.body, headers=call.headers()
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


EMAIL_KINDS = ("email", "edit", "reject")
"""Tool approvals: approved as asked, approved with edited arguments, rejected."""
CHAIN_KINDS = ("chain-approve", "chain-reject")
"""An expense whose chain the approvers approve (manager, then 2 of finance) or reject: every
other rejected chain is rejected by its manager (bob, through the API), the others by finance
once the manager approved (carol and dave, by the links their notices brought)."""
ORDER_KINDS = ("order", "plain-order")
"""A producer's question answered in chat: the examples' order, and a team's producer on a
plain client (no codec) that takes a large answer (tests/plain_producer.py)."""
KINDS = (*EMAIL_KINDS, *CHAIN_KINDS, *ORDER_KINDS, "expiry")
PLAIN_ANSWER_CHARS = 48 << 10
"""Characters of notes in a plain producer's answer: large (its settlement, far over the
codec's 1 KiB, must reach a worker without the codec), within the gateway's default limits."""


@dataclass(eq=False)
class Flow:
    """One thread and what its client does in it (see `KINDS` and tests/faults/scripts.py)."""

    index: int
    thread_id: str
    kind: str
    start_delay: float
    think: float
    """Seconds between the interrupt and its resume (for flows not held for a kill)."""
    hold_for_kill: int | None = None
    """The kill (1-based) this flow waits for with its interrupt open, then resolves it."""
    phase: str = "waiting"
    tool_call_id: str | None = None
    held_across: str | None = None
    """The process killed while this flow's interrupt was open."""
    runs: list[str] = field(default_factory=list)
    """Every run the client started in the thread, in order (re-sends are the same run)."""
    outcome: dict[str, Any] = field(default_factory=dict)
    """What the owner workflow ended with (chains: status and decisions; orders: result)."""
    error: str | None = None

    @property
    def address(self) -> str:
        return f"{self.thread_id}@example.com"

    @property
    def sent_to(self) -> str | None:
        """Where the flow's one email goes (None: no email may be sent)."""
        return {"email": self.address, "edit": f"edited-{self.address}"}.get(self.kind)

    @property
    def principal(self) -> str | None:
        """The requester of an expense (never an approver), the owner of a producer's thread
        (no one else may see it); other flows are anonymous."""
        if self.kind in ORDER_KINDS:
            return f"owner-{self.thread_id}"
        return f"alice-{self.thread_id}" if self.kind in CHAIN_KINDS else None

    @property
    def decisions(self) -> dict[str, str]:
        """What the expense chain's approvers decide at each step (`approve`, `reject`)."""
        if self.kind == "chain-approve":
            return {"manager": "approve", "finance": "approve"}
        if self.index % 2:
            return {"manager": "approve", "finance": "reject"}
        return {"manager": "reject"}

    @property
    def amount(self) -> int:
        """Above 1000 the chain has a finance step: for every chain finance decides."""
        return 2400 if "finance" in self.decisions else 400

    @property
    def speed(self) -> str:
        return "express" if self.index % 2 else "standard"

    def body(self, name: str, text: str | None = None, **fields: Any) -> dict[str, Any]:
        """A new run in the flow's thread (recorded in `runs`), after the previous one."""
        run_id = f"{self.thread_id}-{name}"
        message = {"id": f"{run_id}-m", "role": "user", "content": text}
        body = {"threadId": self.thread_id, "runId": run_id, "messages": [message] if text else []}
        if self.runs:
            body["parentRunId"] = self.runs[-1]
        self.runs.append(run_id)
        return {**body, **fields}

    def approval(self) -> dict[str, Any]:
        """The payload answering the flow's tool call."""
        if self.kind == "reject":
            return {"approved": False}
        if self.kind == "edit":
            edited = {"to": self.sent_to, "subject": "Edited", "body": "hi again"}
            return {"approved": True, "editedArgs": edited}
        return {"approved": True}


def only_interrupt(events: list[dict[str, Any]], reason: str) -> dict[str, Any]:
    """The one interrupt (for `reason`) the run must end with."""
    outcome = events[-1].get("outcome") or {}
    pending = outcome.get("interrupts") or []
    if outcome.get("type") != "interrupt" or len(pending) != 1:
        raise FlowError(f"expected one interrupt, the run ended with {outcome}")
    if pending[0].get("reason") != reason:
        raise FlowError(f"expected a {reason} interrupt, got {pending[0]}")
    return dict(pending[0])


def heard(events: list[dict[str, Any]], tool_call_id: str, reason: str) -> None:
    """A call that did not run still got one result: the reason, for the model to hear."""
    contents = [
        e.get("content")
        for e in events
        if e["type"] == "TOOL_CALL_RESULT" and e["toolCallId"] == tool_call_id
    ]
    if contents != [reason]:
        raise FlowError(f"call {tool_call_id} got results {contents}, not {reason!r}")


def said(events: list[dict[str, Any]], expected: str, results: list[str]) -> str:
    """The run's text, once it ended well, said `expected` and returned these tool results."""
    outcome = events[-1].get("outcome")
    returned = [e["toolCallId"] for e in events if e["type"] == "TOOL_CALL_RESULT"]
    text = texts(events)
    if outcome != {"type": "success"} or returned != results:
        raise FlowError(f"run ended with {outcome}, tool results {returned}")
    if expected not in text:
        raise FlowError(f"run said {text!r}, not {expected!r}")
    return text
