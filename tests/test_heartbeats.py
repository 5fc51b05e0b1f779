"""A thread's activities heartbeat while they run long (so a stopped run's cancel reaches
them); its local activities (the audit send in the changing task) do not: the server knows
no activity to take their heartbeats, and the worker cancels them itself."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta
from typing import Any

import pytest
from temporalio.testing import ActivityEnvironment
from temporalio.worker import (
    ActivityInboundInterceptor,
    ActivityOutboundInterceptor,
    ExecuteActivityInput,
)

from ag_ui_temporal import heartbeats
from ag_ui_temporal.workflows.contract import THREAD_WORKFLOW


class Beats(ActivityOutboundInterceptor):
    """The worker's outbound side, counting the heartbeats it is given."""

    def __init__(self) -> None:
        self.count = 0

    def heartbeat(self, *details: Any) -> None:
        self.count += 1


class Slow(ActivityInboundInterceptor):
    """An activity that runs until it has been given `beats` heartbeats or `ticks` ticks."""

    def __init__(self, beats: Beats, ticks: int) -> None:
        self.beats, self.ticks = beats, ticks

    def init(self, outbound: ActivityOutboundInterceptor) -> None:
        pass  # the end of the chain

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        for _ in range(self.ticks):
            if self.beats.count:
                break
            await asyncio.sleep(heartbeats.HEARTBEAT_EVERY.total_seconds())
        return self.beats.count


@pytest.mark.parametrize("local", [False, True])
async def test_only_a_threads_remote_activities_heartbeat(
    local: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(heartbeats, "HEARTBEAT_EVERY", timedelta(milliseconds=10))
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, is_local=local, workflow_type=THREAD_WORKFLOW)
    beats = Beats()
    inbound = heartbeats.Heartbeats().intercept_activity(Slow(beats, ticks=20))
    inbound.init(beats)
    call = ExecuteActivityInput(fn=lambda: None, args=[], executor=None, headers={})

    beaten = await env.run(inbound.execute_activity, call)

    assert beaten == (0 if local else 1)
