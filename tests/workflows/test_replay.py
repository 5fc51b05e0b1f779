"""Recorded histories replay against today's workflow code.

Threads, approval chains and producers stay parked for days across deploys; a
change that would make their replay diverge fails here first.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai.durable_exec.temporal import PydanticAIPlugin
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from ag_ui_temporal.demo.serving import serve_agents
from ag_ui_temporal.examples.orders import OrderWorkflow
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.temporal_client import DATA_CONVERTER
from ag_ui_temporal.worker import SANDBOX, preload_workflow_imports
from ag_ui_temporal.workflows.chains.workflow import ApprovalChain
from ag_ui_temporal.workflows.thread.workflow import ThreadWorkflow

HISTORIES = sorted((Path(__file__).parent / "histories").glob("*.json"))


def test_histories_are_recorded():
    assert len(HISTORIES) >= 4


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
async def test_history_replays(path: Path):
    history = WorkflowHistory.from_json(f"replay-{path.stem}", path.read_text())
    serve_agents(Settings())  # the worker's agents: threads run them (`agent_*` histories)
    preload_workflow_imports()  # as the worker does before it polls: no import in a task
    replayer = Replayer(
        workflows=[ThreadWorkflow, ApprovalChain, OrderWorkflow],
        data_converter=DATA_CONVERTER,
        workflow_runner=SANDBOX,  # as the worker runs them
        plugins=[PydanticAIPlugin()],
    )
    await replayer.replay_workflow(history)
