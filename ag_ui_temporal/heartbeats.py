"""A thread's activities heartbeat, so that a stopped run's cancel reaches them.

Temporal tells a running activity it was cancelled only in the answer to a heartbeat. A
thread's activities (a model request, a tool) heartbeat seldom or never by themselves: a run
stopped while one ran (`cancel_run`, `workflows.thread._stop`) would leave it working, the
provider still streaming tokens nobody reads, until it ended on its own. The workflow does not wait
for it (its activities are cancelled with `TRY_CANCEL`); the activity must still stop.

pydantic-ai's activities heartbeat on their own, but seldom (a model request every 15 s, a
tool every 5 s), and the worker passes a heartbeat on at most every 0.8 x the activity's
heartbeat timeout (a model request's: 30 s), so a cancel would take up to 24 s to reach a
model request, and never reach an activity that does not heartbeat (the demo's tools).

`Heartbeats`, a worker interceptor, heartbeats each activity of a thread every
`HEARTBEAT_EVERY` once it has run that long (shorter ones, most of them, send none), and the
thread worker passes heartbeats on that often (`default_heartbeat_throttle_interval` and
`max_heartbeat_throttle_interval`, `worker.build_worker`). So a cancel reaches an activity
within about `HEARTBEAT_EVERY`, and an async activity is cancelled where it awaits: the
model's HTTP stream is closed. Nothing of this is in a workflow's history. The cost: one
heartbeat a second (on Temporal Cloud, a billable action) per activity running longer than
that, a tenth of what a streaming model request sends as delta batches (one signal per 100 ms).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from temporalio import activity
from temporalio.worker import (
    ActivityInboundInterceptor,
    ActivityOutboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

from ag_ui_temporal.workflows.contract import THREAD_WORKFLOW

HEARTBEAT_EVERY = timedelta(seconds=1)
"""How often a thread's activity heartbeats (and the worker's heartbeat throttle)."""


class Heartbeats(Interceptor):
    """Heartbeats for the activities of thread workflows (see the module's docstring)."""

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Beating(next)


class _Beating(ActivityInboundInterceptor):
    outbound: ActivityOutboundInterceptor | None = None

    def init(self, outbound: ActivityOutboundInterceptor) -> None:
        self.outbound = outbound
        super().init(outbound)

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        info = activity.info()
        # a local activity (the audit send in the changing task) is cancelled in the worker
        # itself, and the server knows no activity to heartbeat for it
        if self.outbound is None or info.is_local or info.workflow_type != THREAD_WORKFLOW:
            return await super().execute_activity(input)
        beating = asyncio.create_task(_beat(self.outbound))
        try:
            return await super().execute_activity(input)
        finally:
            beating.cancel()


async def _beat(outbound: ActivityOutboundInterceptor) -> None:
    """The worker's own heartbeat call (not `activity.heartbeat`, which a thread-pool
    activity's context routes through a blocking call meant for its thread)."""
    while True:
        await asyncio.sleep(HEARTBEAT_EVERY.total_seconds())
        outbound.heartbeat()
