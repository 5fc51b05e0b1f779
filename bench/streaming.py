"""Streaming overhead: a model delta's way from the model activity to the SSE client.

The `bench-stream` agent (bench/stream_agent.py, in the worker) emits deltas on a
schedule, each stamped with its wall-clock emit time; this client stamps each
`TEXT_MESSAGE_CONTENT` it receives. Both run on this machine, so one clock. The thread's
history splits each delay in three:

- emit → the stream signal's `event_time` (the server has the batch): the 100 ms
  `WorkflowStreamClient` batching, and the signal RPC;
- signal → the event's `timestamp` (`workflow.now()`, the workflow task's start, ms);
- workflow task → client: the task itself, the gateway's `run_events` poll, SSE.
"""

from __future__ import annotations

import asyncio
import base64
import codecs
import json
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import aiohttp
from temporalio.api.common.v1 import Payload
from temporalio.client import Client

from ag_ui_temporal.agents.streaming import BATCH_INTERVAL
from bench.client import new_id
from bench.cycles import gateway_resumes
from bench.measure import CPU_SECONDS, pct
from bench.stream_agent import DELTA, NAME, prompt

MS = timedelta(milliseconds=1)
COUNT, EVERY_MS = 40, 50
"""Deltas per response and the model's pace: 2 s of text, two deltas per 100 ms batch."""


@dataclass
class Response:
    """One streamed response, as the client and the thread's history saw it."""

    emitted: dict[int, int] = field(default_factory=dict)
    """Emit time (ns) by delta index."""
    received: dict[int, int] = field(default_factory=dict)
    """Client receipt (ns) by delta index."""
    task_ms: dict[int, int] = field(default_factory=dict)
    """The event's `timestamp` (workflow task start, ms) by delta index."""
    signaled: dict[int, int] = field(default_factory=dict)
    """The stream signal's server time (ns) by delta index (none: it came with the response)."""
    content_events: int = 0
    history: dict[str, int] = field(default_factory=dict)


async def read_run(http: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> Response:
    """POST the run; stamp each text delta as its SSE frame arrives, up to RUN_FINISHED."""
    out = Response()
    async with http.post(url, json=body) as response:
        if response.status != 200:
            raise RuntimeError(f"POST answered {response.status}: {await response.text()}")
        buffer, text = "", codecs.getincrementaldecoder("utf-8")()
        async for chunk in response.content.iter_any():
            now = time.time_ns()
            buffer += text.decode(chunk)
            while "\n\n" in buffer:
                frame, buffer = buffer.split("\n\n", 1)
                for line in frame.splitlines():
                    if line.startswith("data: "):
                        _take(out, json.loads(line[6:]), now)
    return out


def _take(out: Response, event: dict[str, Any], now: int) -> None:
    if event["type"] == "RUN_ERROR":
        raise RuntimeError(f"streamed run failed: {event}")
    if event["type"] != "TEXT_MESSAGE_CONTENT":
        return
    out.content_events += 1
    for index, emitted in DELTA.findall(event["delta"]):
        out.emitted[int(index)] = int(emitted)
        out.received[int(index)] = now
        out.task_ms[int(index)] = event["timestamp"]


async def read_history(client: Client, thread_id: str, out: Response) -> None:
    from ag_ui_temporal.payloads import CODEC
    from ag_ui_temporal.workflows.contract import STREAM_PUBLISH_SIGNAL, thread_workflow_id

    history = await client.get_workflow_handle(thread_workflow_id(thread_id)).fetch_history()
    signals = tasks = 0
    for event in history.events:
        if event.HasField("workflow_task_completed_event_attributes"):
            tasks += 1
        signaled = event.workflow_execution_signaled_event_attributes
        if not event.HasField("workflow_execution_signaled_event_attributes"):
            continue
        if signaled.signal_name != STREAM_PUBLISH_SIGNAL:
            continue
        signals += 1
        at = event.event_time.ToNanoseconds()
        [batch] = await CODEC.decode(signaled.input.payloads)
        for item in json.loads(batch.data)["items"]:
            delta = json.loads(Payload.FromString(base64.b64decode(item["data"])).data)["delta"]
            for index, _ in DELTA.findall(delta):
                out.signaled.setdefault(int(index), at)
    out.history = {"events": len(history.events), "stream_signals": signals, "tasks": tasks}


async def respond(
    http: aiohttp.ClientSession, base_url: str, client: Client, count: int, every_ms: int
) -> Response:
    """One streamed response, in a thread of its own (its history is this response's)."""
    thread_id = new_id("stream")
    body = {
        "threadId": thread_id,
        "runId": new_id("run"),
        "messages": [{"id": new_id("m"), "role": "user", "content": prompt(count, every_ms)}],
    }
    out = await read_run(http, f"{base_url}/agents/{NAME}", body)
    if sorted(out.received) != list(range(count)):
        raise RuntimeError(f"deltas lost: got {sorted(out.received)} of {count}")
    await read_history(client, thread_id, out)
    return out


def _ms(values_ns: list[int]) -> dict[str, Any]:
    ms = [v / 1e6 for v in values_ns]
    return {"p50": round(pct(ms, 50), 1), "p99": round(pct(ms, 99), 1), "max": round(max(ms), 1)}


def _spread(values: list[int]) -> dict[str, float]:
    return {"mean": round(sum(values) / len(values), 1), "min": min(values), "max": max(values)}


def summarize(responses: list[Response], count: int) -> dict[str, Any]:
    total, to_signal, to_task, to_client = [], [], [], []
    for r in responses:
        for i, received in r.received.items():
            total.append(received - r.emitted[i])
            task_ns = r.task_ms[i] * 1_000_000
            to_client.append(received - task_ns)
            if i in r.signaled:  # else it came with the model's whole response
                to_signal.append(r.signaled[i] - r.emitted[i])
                to_task.append(task_ns - r.signaled[i])
    return {
        "responses": len(responses),
        "deltas_per_response": count,
        "delay_ms": {"n": len(total), **_ms(total)},
        "emit_to_signal_ms": _ms(to_signal),
        "signal_to_workflow_task_ms": _ms(to_task),
        "workflow_task_to_client_ms": _ms(to_client),
        "deltas_not_streamed": len(total) - len(to_signal),
        "sse_content_events_per_response": _spread([r.content_events for r in responses]),
        "history_events_per_response": _spread([r.history["events"] for r in responses]),
        "stream_signals_per_response": _spread([r.history["stream_signals"] for r in responses]),
        "workflow_tasks_per_response": _spread([r.history["tasks"] for r in responses]),
    }


async def deltas_phase(
    http: aiohttp.ClientSession,
    base_url: str,
    client: Client,
    sequential: int = 10,
    concurrent: int = 5,
    rounds: int = 2,
) -> dict[str, Any]:
    """One-delta responses first (what a response costs without streaming), then
    `sequential` responses one after the other, then `rounds` of `concurrent` at once.
    Every set's CPU includes fetching its histories, the one-delta set's too."""
    cpu = _cpu()
    ones = [await respond(http, base_url, client, 1, 0) for _ in range(sequential // 2)]
    one = {
        "history_events": ones[0].history["events"],
        "cpu_ms_per_response": _cpu_per(cpu, len(ones)),
    }
    cpu = _cpu()
    alone = [await respond(http, base_url, client, COUNT, EVERY_MS) for _ in range(sequential)]
    alone_cpu, cpu = _cpu_per(cpu, sequential), _cpu()
    together: list[Response] = []
    for _ in range(rounds):
        jobs = [respond(http, base_url, client, COUNT, EVERY_MS) for _ in range(concurrent)]
        together += await asyncio.gather(*jobs)
    return {
        "model": {"deltas": COUNT, "every_ms": EVERY_MS, "batch_ms": BATCH_INTERVAL / MS},
        "sequential": {**summarize(alone, COUNT), "cpu_ms_per_response": alone_cpu},
        f"c{concurrent}": {
            **summarize(together, COUNT),
            "cpu_ms_per_response": _cpu_per(cpu, len(together)),
        },
        "one_delta": one,
    }


def _cpu() -> dict[str, float]:
    return {name: seconds() for name, seconds in CPU_SECONDS.items()}


def _cpu_per(before: dict[str, float], responses: int) -> dict[str, float]:
    """CPU ms each process spent per response since `before` (the polls' cost shows here)."""
    spent = {name: 1000 * (cpu - before[name]) / responses for name, cpu in _cpu().items()}
    return {name: round(ms, 1) for name, ms in spent.items() if ms >= 0.1}


async def streaming_phase(http: aiohttp.ClientSession, url: str, n: int) -> dict[str, Any]:
    """Event timestamp (workflow.now(), the workflow task's start) to client receipt, on
    approvals that run the sendEmail activity (so the run outlives QUICK_RUN and is followed)."""
    timings: list[tuple[str, float]] = []
    result = await gateway_resumes(http, url, 1, n, approved=True, timings=timings)
    result.pop("_raw")
    delays = [d for _, d in timings]
    by_type: dict[str, list[float]] = {}
    for kind, d in timings:
        by_type.setdefault(kind, []).append(d)
    return {
        "resume_with_tool": result,
        "delay_ms": {
            "n": len(delays),
            "p50": round(pct(delays, 50), 1),
            "p99": round(pct(delays, 99), 1),
            "max": round(max(delays), 1),
        },
        "delay_ms_by_type": {k: round(pct(v, 50), 1) for k, v in sorted(by_type.items())},
    }
