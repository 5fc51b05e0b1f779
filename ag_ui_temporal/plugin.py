"""`AgUiTemporalPlugin`: ag-ui-temporal on a team's own Temporal client and worker.

A team's worker runs its own workflows (orders, deployments, ...) that pause in a chat
thread with `ask_in_thread`. Added to its client or its worker, the plugin gives it:

- the data converter the thread workers use: temporalio's pydantic JSON (its adapters
  built once per worker) and the codec that reads what threads compress. A thread
  compresses only payloads in a thread's own context, so what reaches a workflow that is
  not a thread stays readable by a plain client;
- the sandbox passthroughs of the modules a producer's workflow imports that only define
  data (the protocol's models and names), so each workflow's sandbox does not load them anew.

No activity of ours runs on the team's worker: a producer reaches a thread through an
activity on the thread workers' task queue (`workflows.producers.thread_signals`). It needs
only the core install (`pip install ag-ui-temporal`): Temporal, pydantic and the protocol.
"""

from __future__ import annotations

import dataclasses
from typing import Final

from temporalio.converter import DataConverter
from temporalio.plugin import SimplePlugin
from temporalio.worker import WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from ag_ui_temporal.payloads import CODEC, PayloadConverter

PASSTHROUGH_MODULES: Final = (
    "ag_ui_temporal.workflows.contract",
    "ag_ui_temporal.workflows.schema",
)
"""Modules of ours that define only data or pure functions, shared with every sandbox: the
protocol (pydantic models, names) and the schema checks, whose cache must be shared."""


def data_converter(existing: DataConverter | None = None) -> DataConverter:
    """The thread workers' converter. A codec of the team's own (encryption, say) is kept:
    then the thread workers must be given the same one, as any two workers that exchange
    payloads must."""
    base = existing or DataConverter.default
    return dataclasses.replace(
        base,
        payload_converter_class=PayloadConverter,
        payload_codec=base.payload_codec or CODEC,
    )


def workflow_runner(existing: WorkflowRunner | None) -> WorkflowRunner:
    """The worker's sandbox, with `PASSTHROUGH_MODULES` passed through (any other runner as
    it is: it shares every module already)."""
    runner = existing or SandboxedWorkflowRunner()
    if not isinstance(runner, SandboxedWorkflowRunner):
        return runner
    restrictions = runner.restrictions.with_passthrough_modules(*PASSTHROUGH_MODULES)
    return dataclasses.replace(runner, restrictions=restrictions)


class AgUiTemporalPlugin(SimplePlugin):
    """`Client.connect(..., plugins=[AgUiTemporalPlugin()])`, or the same on a `Worker`."""

    def __init__(self) -> None:
        super().__init__(
            "ag_ui_temporal.AgUiTemporalPlugin",
            data_converter=data_converter,
            workflow_runner=workflow_runner,
        )
