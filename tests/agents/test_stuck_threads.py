"""Threads whose workflow task keeps failing (`gateway.stuck`), through a real worker, gateway
and Temporal dev server:

- a run whose first task fails is dropped, and no copy of its update lands after the reset
  (Temporal sends an update-with-start that the reset aborted on to the new run);
- a thread bricked while no client waited (a producer's offer) is cured by the next run,
  which is taken, and keeps the offer;
- a worker without the thread's agent (mid-rollout) is no fault of the run's: the run waits
  for a worker that has it, and completes;
- what the watch decides from a history (`diagnose`).

The agent `t-stuck` fails its thread's tasks in the thread's first Temporal run only
(`tests/agents/stuck_agents.py`): a fault a reset cures, so what the reset does is seen
deterministically, not by luck.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel
from temporalio.api.enums.v1 import EventType, WorkflowTaskFailedCause
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowUpdateFailedError,
    WorkflowUpdateHandle,
    WorkflowUpdateStage,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.service import RPCError, RPCStatusCode

from ag_ui_temporal.agents import ThreadDeps, register, registered, thread_capabilities
from ag_ui_temporal.gateway.stuck import STUCK, UNCURED, Cure, Wait, diagnose
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.worker import build_worker
from ag_ui_temporal.workflows.contract import (
    DROP_RUNS_SIGNAL,
    OFFER_INTERRUPT_SIGNAL,
    RUN_UPDATE,
    THREAD_WORKFLOW,
    AgentNotServed,
    ErrorCode,
    RunRequest,
    RunResult,
    run_digest,
    run_of_update,
    run_update_id,
    thread_input,
    thread_workflow_id,
)
from tests.agents.stuck_agents import FAIL, NAME
from tests.agui import finished, new_id, run, texts, thread_state, user
from tests.conftest import free_port, serve_gateway, serve_stack
from tests.test_offer_delivery import raw_offer

BIN = Path(sys.executable).parent


def quick_to_unstick(data: Path, queue: str) -> Settings:
    """What the tests here wait for is a failing task's attempts, which Temporal tries again
    as a task's timeout ends (10 s by default): their threads' tasks time out sooner, and the
    gateway looks at them more often."""
    return Settings(
        data_dir=data,
        task_queue=queue,
        thread_task_timeout=timedelta(seconds=3),
        stuck_check_every=timedelta(seconds=0.25),
    )


async def _stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    yield "hello"


def _register() -> None:
    if registered(NAME) is None:
        agent = Agent(
            FunctionModel(stream_function=_stream),
            name=NAME,
            deps_type=ThreadDeps,
            capabilities=thread_capabilities(),
        )
        register(agent, workflow_agent="tests.agents.stuck_agents:FailsInTheFirstRun")


@dataclass
class Stack:
    http: httpx.AsyncClient
    client: Client
    settings: Settings


@pytest.fixture(scope="module")
async def stack(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[Stack]:
    _register()
    name = f"stuck-{uuid.uuid4().hex[:8]}"
    settings = quick_to_unstick(data_dir / name, name)
    async with serve_stack(client, settings, executor, request_timeout=120) as http:
        yield Stack(http, client, settings)


async def until(check: Callable[[], Awaitable[bool]]) -> None:
    """Polls a condition Temporal tells nobody about (a failed task, its attempt)."""
    while not await check():
        await asyncio.sleep(0.1)


async def _history(client: Client, thread_id: str) -> list[HistoryEvent]:
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    return [event async for event in handle.fetch_history_events()]


def _failed(events: list[HistoryEvent]) -> list[HistoryEvent]:
    return [e for e in events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED]


async def _attempt(client: Client, thread_id: str) -> int:
    """The attempt of the thread's pending workflow task (0: none, or no thread yet)."""
    try:
        description = await client.get_workflow_handle(thread_workflow_id(thread_id)).describe()
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            return 0
        raise
    return description.raw_description.pending_workflow_task.attempt


async def _attempt_at_least(client: Client, thread_id: str, attempt: int) -> bool:
    return await _attempt(client, thread_id) >= attempt


def _copy_of(
    stack: Stack, thread_id: str, run_id: str, text: str
) -> Awaitable[WorkflowUpdateHandle[RunResult]]:
    """The run's update as another sender of it has it in flight (a second gateway the client
    re-sent the POST to, or the client library asking again): update-with-start, as the
    gateway sends a new message, waiting to be accepted."""
    request = RunRequest(
        thread_id=thread_id,
        run_id=run_id,
        agent=NAME,
        messages=[user(text)],
        principal="anonymous",
        admin=True,
    )
    start: WithStartWorkflowOperation[Any, Any] = WithStartWorkflowOperation(
        THREAD_WORKFLOW,
        thread_input(stack.settings, NAME, thread_id),
        id=thread_workflow_id(thread_id),
        task_queue=stack.settings.task_queue,
        task_timeout=stack.settings.thread_task_timeout,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
    )
    return stack.client.start_update_with_start_workflow(
        RUN_UPDATE,
        request,
        start_workflow_operation=start,
        id=run_update_id(run_id, run_digest(request)),
        wait_for_stage=WorkflowUpdateStage.ACCEPTED,
        result_type=RunResult,
    )


async def test_a_dropped_run_never_lands_after_the_reset(stack: Stack, thread_id: str):
    """The run's first task fails: its update was admitted, never accepted. The reset aborts
    it, and Temporal sends every update-with-start still waiting on it to the new run, where
    the task no longer fails: without the thread's record of the drop, it lands there after
    the client was told "nothing of the run was kept" (a client re-sending it would run it)."""
    assert texts(await run(stack.http, thread_id, agent=NAME, text="hi")) == "hello"
    run_id = new_id()
    posted = asyncio.ensure_future(run(stack.http, thread_id, agent=NAME, text=FAIL, run_id=run_id))
    await until(lambda: _attempt_at_least(stack.client, thread_id, 2))  # failed once
    copy = asyncio.ensure_future(_copy_of(stack, thread_id, run_id, FAIL))

    dropped = await posted
    assert dropped[-1]["type"] == "RUN_ERROR"
    assert dropped[-1]["code"] == ErrorCode.RUN_FAILED
    assert "dropped" in dropped[-1]["message"]
    # the copy that reached the reset thread was refused there: it never ran
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await (await copy).result()
    assert getattr(refused.value.cause, "type", None) == ErrorCode.RUN_FAILED
    events = await _history(stack.client, thread_id)
    accepted = [
        e.workflow_execution_update_accepted_event_attributes.accepted_request.meta.update_id
        for e in events
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
    ]
    assert run_id not in {run_of_update(update_id) for update_id in accepted}

    # the thread takes the next message; the dropped run, sent again, is refused, not run
    after = await run(stack.http, thread_id, agent=NAME, text="hi again")
    assert texts(after) == "hello"
    again = await run(stack.http, thread_id, agent=NAME, text=FAIL, run_id=run_id)
    assert [e["type"] for e in again] == ["RUN_STARTED", "RUN_ERROR"]
    assert again[-1]["code"] == ErrorCode.RUN_FAILED
    state = await thread_state(stack.client, thread_id)
    said = [m.get("content") for m in state.messages if m["role"] == "user"]
    assert said == ["hi", "hi again"]
    assert run_id not in [r.run_id for r in state.runs]


async def test_a_thread_bricked_with_no_run_waiting_is_cured_by_the_next_run(
    stack: Stack, thread_id: str
):
    """A producer's offer, delivered by a run of the thread's own, fails the task: no client
    waits, no watch looks. From the task's third attempt Temporal refuses every run at once;
    the next one cures the thread (a reset, the offer re-applied) and is taken."""
    assert texts(await run(stack.http, thread_id, agent=NAME, text="hi")) == "hello"
    offer = raw_offer(f"owner-{thread_id}", "which day?")
    handle = stack.client.get_workflow_handle(thread_workflow_id(thread_id))
    await handle.signal(OFFER_INTERRUPT_SIGNAL, offer)
    await until(lambda: _attempt_at_least(stack.client, thread_id, 3))  # runs refused now

    shown = await run(stack.http, thread_id, agent=NAME)  # no input: shows what awaits
    outcome = finished(shown)["outcome"]
    assert [i["id"] for i in outcome["interrupts"]] == [offer["interrupt"]["id"]]
    events = await _history(stack.client, thread_id)
    assert not any(  # nothing to drop: no run had failed the task
        e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
        and e.workflow_execution_signaled_event_attributes.signal_name == DROP_RUNS_SIGNAL
        for e in events
    )


@dataclass
class OldWorker:
    """`ag-ui-temporal worker` on a queue of its own, serving none of this process's registered
    agents (no `AGENT_MODULES`): the worker a rollout has not reached yet."""

    process: asyncio.subprocess.Process
    queue: str
    data: Path
    health: str


@pytest.fixture(scope="module", autouse=True)
async def old_worker(client: Client, data_dir: Path) -> AsyncIterator[OldWorker]:
    """Started as the module begins, not waited for: the process imports while the tests
    before the rollout's run (which waits until it is ready)."""
    queue = f"rollout-{uuid.uuid4().hex[:8]}"
    data = data_dir / queue
    data.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = {
        **os.environ,
        "TEMPORAL_ADDRESS": client.service_client.config.target_host,
        "TASK_QUEUE": queue,
        "DATA_DIR": str(data),
        "WORKER_HEALTH_PORT": str(port),
    }
    env.pop("AGENT_MODULES", None)
    process = await asyncio.create_subprocess_exec(
        str(BIN / "ag-ui-temporal"), "worker", env=env, cwd=data,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        yield OldWorker(process, queue, data, f"http://127.0.0.1:{port}")
    finally:
        await _stop(process)


async def test_a_worker_without_the_agent_makes_the_run_wait_for_one_with_it(
    client: Client, executor: ThreadPoolExecutor, old_worker: OldWorker, thread_id: str
):
    """Mid-rollout: the gateway serves the agent, the only worker does not yet. The thread's
    task fails (`AgentNotServed`) until a worker with the agent takes it: the run is not
    dropped, and completes then. The old worker is stopped only after the task's fourth
    attempt, by when the watch has looked at it in its third (a watch that took it for the
    run's fault would have reset the thread and dropped the run)."""
    _register()
    settings = quick_to_unstick(old_worker.data, old_worker.queue)
    async with (
        serve_gateway(settings, client) as url,
        httpx.AsyncClient(base_url=url, timeout=300) as http,
        httpx.AsyncClient(base_url=old_worker.health, timeout=5) as health,
    ):
        await until(lambda: _ready(health, old_worker.process))
        posted = asyncio.ensure_future(run(http, thread_id, agent=NAME, text="hi"))
        await until(lambda: _attempt_at_least(client, thread_id, 4))
        failures = _failed(await _history(client, thread_id))
        assert {_failure_type(f) for f in failures} == {AgentNotServed.__name__}  # no reset's
        await _stop(old_worker.process)
        async with build_worker(client, settings, executor):
            events = await posted
    assert texts(events) == "hello", events
    assert finished(events)["outcome"] == {"type": "success"}
    assert not [f for f in _failed(await _history(client, thread_id)) if _cause(f) == _RESET]


def _failure_type(failed: HistoryEvent) -> str:
    return failed.workflow_task_failed_event_attributes.failure.application_failure_info.type


def _cause(failed: HistoryEvent) -> WorkflowTaskFailedCause.ValueType:
    return failed.workflow_task_failed_event_attributes.cause


_RESET = WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW


async def _ready(health: httpx.AsyncClient, process: asyncio.subprocess.Process) -> bool:
    assert process.returncode is None, f"the old worker exited {process.returncode}"
    try:
        return (await health.get("/readyz")).status_code == 200
    except httpx.TransportError:
        return False


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.send_signal(signal.SIGTERM)
        await process.wait()


# -- what the watch decides from a history -------------------------------------------------


def _events(*kinds: tuple[str, str | None]) -> list[HistoryEvent]:
    """Events numbered from 1: (kind, detail): a run's id for an update's acceptance or
    completion, a failure's cause (or `AgentNotServed`), a signal's name."""
    events = []
    for event_id, (kind, detail) in enumerate(kinds, start=1):
        event = HistoryEvent(event_id=event_id, event_type=getattr(EventType, f"EVENT_TYPE_{kind}"))
        if kind == "WORKFLOW_EXECUTION_UPDATE_ACCEPTED":
            request = event.workflow_execution_update_accepted_event_attributes.accepted_request
            request.meta.update_id = run_update_id(detail or "", None)
            request.input.name = RUN_UPDATE
        elif kind == "WORKFLOW_EXECUTION_UPDATE_COMPLETED":
            completed = event.workflow_execution_update_completed_event_attributes
            completed.meta.update_id = run_update_id(detail or "", None)
        elif kind == "WORKFLOW_TASK_FAILED":
            failed = event.workflow_task_failed_event_attributes
            if detail == AgentNotServed.__name__:
                failed.failure.application_failure_info.type = detail
            elif detail:
                failed.cause = getattr(
                    WorkflowTaskFailedCause, f"WORKFLOW_TASK_FAILED_CAUSE_{detail}"
                )
        elif kind == "WORKFLOW_EXECUTION_SIGNALED":
            event.workflow_execution_signaled_event_attributes.signal_name = detail or ""
        events.append(event)
    return events


START = (("WORKFLOW_EXECUTION_STARTED", None), ("WORKFLOW_TASK_SCHEDULED", None))
TASK = (("WORKFLOW_TASK_STARTED", None), ("WORKFLOW_TASK_COMPLETED", None))
FAILING = ("WORKFLOW_TASK_FAILED", "WORKFLOW_WORKER_UNHANDLED_FAILURE")
FAILED_TASK = (("WORKFLOW_TASK_SCHEDULED", None), ("WORKFLOW_TASK_STARTED", None), FAILING)
RESET = (
    ("WORKFLOW_TASK_SCHEDULED", None),
    ("WORKFLOW_TASK_STARTED", None),
    ("WORKFLOW_TASK_FAILED", "RESET_WORKFLOW"),
)


def test_a_reset_leaves_out_the_runs_in_flight_or_the_failing_task():
    # a first task that fails: the thread starts again without the run that came with it
    assert diagnose(_events(*START, *FAILED_TASK[1:]), watched=True) == Cure(4, ())
    # a run accepted in task 4 and not completed: back to before that task, without it
    accepted = _events(*START, *TASK, ("WORKFLOW_EXECUTION_UPDATE_ACCEPTED", "r1"), *FAILED_TASK)
    assert diagnose(accepted, watched=True) == Cure(4, ("r1",))
    # the run completed: only the failing task is left out
    done = _events(
        *START,
        *TASK,
        ("WORKFLOW_EXECUTION_UPDATE_ACCEPTED", "r1"),
        ("WORKFLOW_EXECUTION_UPDATE_COMPLETED", "r1"),
        *FAILED_TASK,
    )
    assert diagnose(done, watched=False) == Cure(9, ())
    # none failing since the last completed one (e.g. a task timed out): nothing to do
    assert diagnose(_events(*START, *FAILED_TASK[1:], *FAILED_TASK[:1], *TASK), True) is None


def test_a_reset_would_not_help_a_task_failing_on_replay_or_for_want_of_its_agent():
    replay = _events(
        *START, *TASK, *FAILED_TASK[:2], ("WORKFLOW_TASK_FAILED", "NON_DETERMINISTIC_ERROR")
    )
    assert diagnose(replay, watched=True) is STUCK
    missing = _events(
        *START, ("WORKFLOW_TASK_STARTED", None), ("WORKFLOW_TASK_FAILED", AgentNotServed.__name__)
    )
    assert diagnose(missing, watched=True) is Wait.FOR_AGENT


def test_a_thread_failing_again_since_a_reset_is_reset_only_to_drop_a_waiting_run():
    reset = _events(*START, *TASK, *RESET, *FAILED_TASK)
    # the reset dropped nothing (a run arrived at a stuck thread): the waiting run may be it
    assert diagnose(reset, watched=True) == Cure(7, ())
    assert diagnose(reset, watched=False) is UNCURED  # no run to blame: not again
    # the reset dropped runs already: what fails the thread is no run
    dropped = _events(
        *START, *TASK, *RESET, ("WORKFLOW_EXECUTION_SIGNALED", DROP_RUNS_SIGNAL), *FAILED_TASK
    )
    assert diagnose(dropped, watched=True) is UNCURED
