"""Recorded histories replay against today's workflow code.

Threads, approval chains and producers stay parked for days across deploys; a
change that would make their replay diverge fails here first.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from ag_ui_temporal.examples.orders import OrderWorkflow
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.worker_plugin import ThreadWorkerPlugin
from tests.conftest import DEMO

HISTORIES = sorted((Path(__file__).parent / "histories").glob("*.json"))


def test_histories_are_recorded():
    assert len(HISTORIES) >= 4


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
async def test_history_replays(path: Path):
    history = WorkflowHistory.from_json(f"replay-{path.stem}", path.read_text())
    # the thread workers' plugin, serving the demo the threads ran (`agent_*` histories): its
    # workflows, sandbox and converter, as a worker runs them
    plugin = ThreadWorkerPlugin(Settings(agent_modules=[DEMO]))
    replayer = Replayer(workflows=[OrderWorkflow], plugins=[plugin])
    await replayer.replay_workflow(history)
