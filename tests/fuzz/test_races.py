"""Racing resumes: different answers to the same open interrupt, sent at once.

Exactly one is applied; every other one gets `RUN_ERROR`
`INTERRUPT_ALREADY_RESOLVED` and changes nothing. Identical answers under other
run ids are the idempotent replay of rule 5; the same run id twice is one run.
The tool's side effect happens at most once, counted in the outbox. Each race
runs on several threads at once, so a race lost only now and then shows up.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowUpdateFailedError,
    WorkflowUpdateHandle,
    WorkflowUpdateStage,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError

from ag_ui_temporal.gateway.auth import ANONYMOUS
from ag_ui_temporal.workflows.contract import (
    RUN_UPDATE,
    THREAD_WORKFLOW,
    ResumeItem,
    RunRequest,
    RunResult,
    WireDict,
    run_digest,
    run_update_id,
    thread_input,
    thread_workflow_id,
)
from tests.agui import (
    cancel,
    error,
    finished,
    interrupts,
    new_id,
    resolve,
    run,
    texts,
    thread_state,
)
from tests.effects import EffectLog
from tests.gateway.conftest import Stack

EMAIL = "Send an email to ada@example.com saying hi"
THREADS = 5
ALREADY = "INTERRUPT_ALREADY_RESOLVED"


def edit(n: int) -> dict[str, Any]:
    return {
        "approved": True,
        "editedArgs": {"to": f"r{n}@example.com", "subject": "Hi", "body": f"v{n}"},
    }


def rival_answers(kind: str, pending: WireDict) -> list[WireDict]:
    """Resume entries for `pending`, all different from each other."""
    if kind == "approve-vs-reject":
        return [resolve(pending, {"approved": True}), resolve(pending, {"approved": False})]
    if kind == "different-payloads":
        return [resolve(pending, edit(n)) for n in range(4)]
    assert kind == "resolve-vs-cancel"
    return [cancel(pending), resolve(pending, {"approved": True}), resolve(pending, edit(0))]


def sent_to(entry: WireDict) -> str | None:
    """Whom the email goes to if `entry` is applied (None: not sent)."""
    payload = entry.get("payload") or {}
    if entry["status"] != "resolved" or not payload.get("approved"):
        return None
    return payload.get("editedArgs", {}).get("to", "ada@example.com")


def effects(outbox: EffectLog, pending: WireDict) -> list[dict[str, Any]]:
    return [e for e in outbox.effects("sendEmail") if e["key"] == pending["toolCallId"]]


async def open_email(http: httpx.AsyncClient, thread_id: str) -> WireDict:
    [pending] = interrupts(await run(http, thread_id, text=EMAIL))
    return pending


async def assert_applied(
    client: Client,
    outbox: EffectLog,
    thread_id: str,
    pending: WireDict,
    entry: WireDict,
    run_id: str,
) -> None:
    """The thread holds `entry` as the answer, applied by `run_id`; the effect matches it."""
    state = await thread_state(client, thread_id)
    [record] = state.interrupts
    assert record.resolution is not None
    assert (record.resolution.status, record.resolution.payload) == (
        entry["status"],
        entry.get("payload"),
    )
    assert record.resolved_by_run == run_id
    done = effects(outbox, pending)
    to = sent_to(entry)
    assert [e["args"]["to"] for e in done] == ([] if to is None else [to])


# -- over the gateway ------------------------------------------------------------


async def race_over_gateway(
    http: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str, kind: str
) -> None:
    pending = await open_email(http, thread_id)
    entries = rival_answers(kind, pending)
    streams = await asyncio.gather(*(run(http, thread_id, resume=[e]) for e in entries))
    won = [i for i, events in enumerate(streams) if events[-1]["type"] == "RUN_FINISHED"]
    assert len(won) == 1, [events[-1] for events in streams]
    [winner] = won
    for i, events in enumerate(streams):
        if i != winner:
            assert error(events)["code"] == ALREADY
    events = streams[winner]
    assert finished(events)["outcome"] == {"type": "success"}
    to = sent_to(entries[winner])
    assert (f"Sent the email to {to}" if to else "did not carry out") in texts(events)
    await assert_applied(client, outbox, thread_id, pending, entries[winner], events[0]["runId"])
    racers = {events[0]["runId"] for events in streams}
    state = await thread_state(client, thread_id)
    assert [r.run_id for r in state.runs if r.run_id in racers] == [events[0]["runId"]]


@pytest.mark.parametrize("kind", ["approve-vs-reject", "different-payloads", "resolve-vs-cancel"])
async def test_rival_resumes_over_gateway_one_wins(
    http: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str, kind: str
):
    threads = [f"{thread_id}-{n}" for n in range(THREADS)]
    await asyncio.gather(*(race_over_gateway(http, client, outbox, t, kind) for t in threads))


async def identical_over_gateway(
    http: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
) -> None:
    pending = await open_email(http, thread_id)
    entry = resolve(pending, edit(7))
    streams = await asyncio.gather(*(run(http, thread_id, resume=[entry]) for _ in range(4)))
    outcomes = {texts(events) for events in streams}
    assert len(outcomes) == 1 and "Sent the email to r7@example.com" in outcomes.pop()
    for events in streams:
        assert finished(events)["runId"] == events[0]["runId"]
    assert len({events[0]["runId"] for events in streams}) == len(streams)
    state = await thread_state(client, thread_id)
    [record] = state.interrupts
    await assert_applied(client, outbox, thread_id, pending, entry, str(record.resolved_by_run))


async def test_identical_resumes_over_gateway_all_succeed_effect_once(
    http: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
):
    threads = [f"{thread_id}-{n}" for n in range(THREADS)]
    await asyncio.gather(*(identical_over_gateway(http, client, outbox, t) for t in threads))


async def same_run_twice(
    http: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
) -> None:
    pending = await open_email(http, thread_id)
    entry, run_id = resolve(pending, {"approved": True}), new_id()
    first, second = await asyncio.gather(
        *(run(http, thread_id, resume=[entry], run_id=run_id) for _ in range(2))
    )
    assert first == second
    assert "Sent the email to ada@example.com" in texts(first)
    state = await thread_state(client, thread_id)
    assert [r.run_id for r in state.runs].count(run_id) == 1
    await assert_applied(client, outbox, thread_id, pending, entry, run_id)


async def test_same_run_id_twice_at_once_is_one_run(
    http: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
):
    threads = [f"{thread_id}-{n}" for n in range(THREADS)]
    await asyncio.gather(*(same_run_twice(http, client, outbox, t) for t in threads))


# -- straight against the workflow update, the first run held at the tool's gate --------


def run_request(thread_id: str, run_id: str, entry: WireDict) -> RunRequest:
    item = ResumeItem(
        interrupt_id=entry["interruptId"],
        status=entry["status"],
        payload=entry.get("payload"),
        has_payload="payload" in entry,
    )
    return RunRequest(
        thread_id=thread_id, run_id=run_id, agent="assistant", resume=[item], principal=ANONYMOUS
    )  # the thread's owner: the gateway's principal for a request without credentials


async def accepted(
    client: Client, stack: Stack, thread_id: str, entry: WireDict, run_id: str
) -> WorkflowUpdateHandle[RunResult] | WorkflowUpdateFailedError:
    """Send the run as the gateway does (update-with-start); return once the workflow took it."""
    start: WithStartWorkflowOperation[Any, Any] = WithStartWorkflowOperation(
        THREAD_WORKFLOW,
        thread_input(stack.settings, "assistant", thread_id),
        id=thread_workflow_id(thread_id),
        task_queue=stack.settings.task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
    )
    request = run_request(thread_id, run_id, entry)
    try:
        return await client.start_update_with_start_workflow(
            RUN_UPDATE,
            request,
            start_workflow_operation=start,
            id=run_update_id(run_id, run_digest(request)),
            wait_for_stage=WorkflowUpdateStage.ACCEPTED,
            result_type=RunResult,
        )
    except WorkflowUpdateFailedError as refused:  # the validator refused it
        return refused


async def outcome(sent: WorkflowUpdateHandle[RunResult] | WorkflowUpdateFailedError) -> Any:
    if isinstance(sent, WorkflowUpdateFailedError):
        return sent
    try:
        return await sent.result()
    except WorkflowUpdateFailedError as refused:  # the handler refused it, under the lock
        return refused


def refusal_code(result: Any) -> str | None:
    if isinstance(result, WorkflowUpdateFailedError) and isinstance(result.cause, ApplicationError):
        return result.cause.type
    return None


async def send_held(
    client: Client, stack: Stack, races: list[tuple[str, list[tuple[WireDict, str]]]]
) -> list[list[Any]]:
    """Send every (entry, run id) of every thread while the tool is held, then let it go."""
    sent = await asyncio.gather(
        *(asyncio.gather(*(accepted(client, stack, t, e, r) for e, r in runs)) for t, runs in races)
    )
    stack.gate.set()
    return list(await asyncio.gather(*(asyncio.gather(*map(outcome, s)) for s in sent)))


async def test_rival_updates_while_first_is_in_flight(
    gated: httpx.AsyncClient, client: Client, stack: Stack, thread_id: str
):
    threads = [f"{thread_id}-{n}" for n in range(THREADS)]
    pendings = await asyncio.gather(*(open_email(gated, t) for t in threads))
    races = [
        (t, [(e, new_id()) for e in rival_answers("different-payloads", p)])
        for t, p in zip(threads, pendings, strict=True)
    ]
    results = await send_held(client, stack, races)
    for (t, runs), pending, got in zip(races, pendings, results, strict=True):
        won = [i for i, r in enumerate(got) if isinstance(r, RunResult)]
        assert len(won) == 1, got
        assert all(refusal_code(r) == ALREADY for i, r in enumerate(got) if i != won[0]), got
        assert got[won[0]].events[-1]["type"] == "RUN_FINISHED"
        entry, run_id = runs[won[0]]
        await assert_applied(client, stack.outbox, t, pending, entry, run_id)


async def test_identical_updates_while_first_is_in_flight(
    gated: httpx.AsyncClient, client: Client, stack: Stack, thread_id: str
):
    threads = [f"{thread_id}-{n}" for n in range(THREADS)]
    pendings = await asyncio.gather(*(open_email(gated, t) for t in threads))
    shared = new_id()  # the same run id twice on top: one run, not two
    races = [
        (t, [(resolve(p, edit(3)), r) for r in (new_id(), new_id(), shared, shared)])
        for t, p in zip(threads, pendings, strict=True)
    ]
    results = await send_held(client, stack, races)
    for (t, runs), pending, got in zip(races, pendings, results, strict=True):
        assert all(isinstance(r, RunResult) for r in got), got
        bodies = {repr(_without_run_ids(r.events)) for r in got}
        assert len(bodies) == 1  # the same outcome under every run id
        assert got[2] == got[3]
        state = await thread_state(client, t)
        assert [r.run_id for r in state.runs].count(shared) <= 1
        record = state.interrupts[0]
        await assert_applied(
            client, stack.outbox, t, pending, runs[0][0], str(record.resolved_by_run)
        )


def _without_run_ids(events: list[WireDict]) -> list[WireDict]:
    return [{k: v for k, v in e.items() if k not in ("runId", "timestamp")} for e in events]
