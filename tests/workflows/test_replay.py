"""The histories recorded under 0.1.0, and each later release's new paths, replay against
today's workflow code.

Threads, approval chains and producers stay parked for days across deploys; a
change that would make their replay diverge fails here first (guard it with a patch:
`workflows/patches.py`, docs/operations.md "Versioning workflow code").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHistory
from temporalio.worker import (
    ExecuteWorkflowInput,
    Interceptor,
    Replayer,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
)

from ag_ui_temporal.examples.orders import OrderWorkflow
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.worker_plugin import ThreadWorkerPlugin
from ag_ui_temporal.workflows.contract.audit import AUDIT_APPEND_ACTIVITY
from tests.conftest import DEMO
from tests.workflows.record_histories import SCENARIOS

HISTORIES_DIR = Path(__file__).parent / "histories"
HISTORIES = sorted(HISTORIES_DIR.glob("*.json"))


def test_every_scenario_is_recorded():
    """One history per flow `record_histories` knows, and no other."""
    recorded = {path.stem.split(".")[0] for path in HISTORIES}
    assert recorded == set(SCENARIOS)


def thread_replayer(*interceptors: Interceptor) -> Replayer:
    """The thread workers' plugin, serving the demo the threads ran (`agent_*` histories):
    its workflows, sandbox and converter, as a worker runs them; and the producer's order."""
    plugin = ThreadWorkerPlugin(Settings(agent_modules=[DEMO]))
    return Replayer(workflows=[OrderWorkflow], plugins=[plugin], interceptors=interceptors)


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
async def test_history_replays(path: Path):
    history = WorkflowHistory.from_json(f"replay-{path.stem}", path.read_text())
    await thread_replayer().replay_workflow(history)


async def test_a_local_send_that_timed_out_replays_on_its_path():
    """A thread whose local audit send timed out (a busy store, 1,300 threads parked at once by
    the bench) and went the background way in the same task: the local activity's marker
    replays as a bare `TimeoutError` where the run saw an `ActivityError`, and the thread takes
    the same path (before, every later task of such a thread failed on replay)."""
    path = Path(__file__).parent / "regressions" / "audit_local_send_timed_out.json"
    history = WorkflowHistory.from_json("timed-out", path.read_text())
    events = list(history.events)
    [marker] = [
        i
        for i, e in enumerate(events)
        if e.marker_recorded_event_attributes.marker_name == "core_local_activity"
    ]
    timed_out = events[marker].marker_recorded_event_attributes.failure
    assert timed_out.HasField("timeout_failure_info")
    after = events[marker + 1].activity_task_scheduled_event_attributes
    assert after.activity_type.name == AUDIT_APPEND_ACTIVITY  # the fallback, in the same task
    await thread_replayer().replay_workflow(history)


def test_the_audit_in_task_history_is_on_its_path():
    """What `email_declined_audited_in_task` protects: the patch taken, each change's records
    sent by a local activity, no audit activity, and a decline in one workflow task."""
    history = WorkflowHistory.from_json(
        "x", (HISTORIES_DIR / "email_declined_audited_in_task.json").read_text()
    )
    markers = [
        e.marker_recorded_event_attributes.marker_name
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
    ]
    activities = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]
    tasks = [
        e for e in history.events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
    ]
    assert markers.count("core_local_activity") == 2  # the ask's records, the decline's
    assert AUDIT_APPEND_ACTIVITY not in activities
    assert len(tasks) == 3  # the ask (its model call, then its answer), the decline


RETURNED: list[Any] = []
"""What the workflows replayed under `Returns` returned, in order."""


class _Returned(WorkflowInboundInterceptor):
    async def execute_workflow(self, input: ExecuteWorkflowInput) -> Any:
        result = await super().execute_workflow(input)
        RETURNED.append(result)
        return result


class Returns(Interceptor):
    """Keeps each replayed workflow's result in `RETURNED` (a replay reports only failures)."""

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor]:
        return _Returned


@pytest.mark.parametrize(
    ("stem", "decided_by", "via"),
    [
        ("external_offer_resolved.order", "anonymous", "chat"),
        ("continuation_resumed.order", "anonymous", "chat"),
        ("inbox_batch_and_partial.order", "dana", "link"),
    ],
)
async def test_an_owner_hears_who_decided_on_replay(
    stem: str, decided_by: str | None, via: str | None
):
    """Recorded orders replay with today's code and hear what their thread sent then
    (`InterruptOutcome.principal`, `.via`): who decided, and how."""
    path = HISTORIES_DIR / f"{stem}.json"
    history = WorkflowHistory.from_json(f"replay-{stem}", path.read_text())
    RETURNED.clear()
    await thread_replayer(Returns()).replay_workflow(history)
    [result] = RETURNED  # the sandbox's own `OrderResult`: its fields, not its class
    assert (result.status, result.decided_by, result.via) == ("shipped", decided_by, via)
