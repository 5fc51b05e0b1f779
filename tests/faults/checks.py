"""What must hold once the faults are over: no lost, doubled or stuck work."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from tests.effects import EffectLog
from tests.faults.flows import Flow
from workflows.contract import THREAD_QUERY, InterruptStatus, ThreadView, thread_workflow_id

STARTED = EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
UNSETTLED = (InterruptStatus.OPEN, InterruptStatus.OFFERED)
QUERY_ATTEMPTS = 50


def check_outbox(outbox: EffectLog, flows: list[Flow]) -> tuple[int, list[str]]:
    """Exactly one `sendEmail` effect per flow, keyed by that flow's tool call id."""
    effects = outbox.effects("sendEmail")
    by_key = Counter(e["key"] for e in effects)
    by_address = Counter(e["args"]["to"] for e in effects)
    problems = [f"{key}: {n} effects" for key, n in by_key.items() if n != 1]
    for flow in flows:
        if by_address[flow.address] != 1:
            problems.append(f"{flow.thread_id}: {by_address[flow.address]} emails sent")
        elif flow.tool_call_id is not None and by_key[flow.tool_call_id] != 1:
            problems.append(f"{flow.thread_id}: no effect for its tool call {flow.tool_call_id}")
    if len(effects) != len(flows):
        problems.append(f"{len(effects)} sendEmail effects for {len(flows)} flows")
    return len(effects), problems


def check_logs(logs: dict[str, Path]) -> list[str]:
    """No stack trace in the worker's or the gateway's log: a fault is answered, not crashed on."""
    problems = []
    for name, path in logs.items():
        text = path.read_text(errors="replace") if path.exists() else ""
        if "Traceback" in text:
            start = text.index("Traceback")
            problems.append(f"{name} logged a stack trace: {text[start : start + 1500]}")
    return problems


async def connect(address: str) -> Client:
    return await Client.connect(address, data_converter=pydantic_data_converter)


async def check_threads(client: Client, flows: list[Flow]) -> list[str]:
    """Every thread has exactly its two runs, both finished, and no interrupt left open."""
    limit = asyncio.Semaphore(16)

    async def check(flow: Flow) -> list[str]:
        async with limit:
            state = await _thread(client, flow.thread_id)
        runs = [(r.run_id, r.finished) for r in state.runs]
        problems = [f"{flow.thread_id}: open interrupt {i.id}" for i in state.interrupts
                    if i.status in UNSETTLED]  # fmt: skip
        if runs != [(run_id, True) for run_id in flow.run_ids]:
            problems.append(f"{flow.thread_id}: runs {runs}")
        return problems

    found = await asyncio.gather(*(check(f) for f in flows))
    return [problem for problems in found for problem in problems]


async def _thread(client: Client, thread_id: str) -> ThreadView:
    """The `thread` query, retried while a restarted worker takes over the thread."""
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    delay = 0.05
    for attempt in range(QUERY_ATTEMPTS):
        try:
            return await handle.query(THREAD_QUERY, result_type=ThreadView)
        except Exception:
            if attempt == QUERY_ATTEMPTS - 1:
                raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)
    raise AssertionError("unreachable")


async def activity_retries(client: Client, flows: list[Flow]) -> int:
    """Tool activities that ran more than once: a worker died running them, and they were
    retried after their start-to-close timeout (the outbox keeps the effect single)."""
    limit = asyncio.Semaphore(16)

    async def count(flow: Flow) -> int:
        handle = client.get_workflow_handle(thread_workflow_id(flow.thread_id))
        async with limit:
            history = await handle.fetch_history()
        return sum(
            e.activity_task_started_event_attributes.attempt > 1
            for e in history.events
            if e.event_type == STARTED
        )

    return sum(await asyncio.gather(*(count(f) for f in flows)))
