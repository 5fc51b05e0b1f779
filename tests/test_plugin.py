"""`AgUiTemporalPlugin` on a team's own client and worker: the thread workers' converter and
the protocol passed through the sandbox, whatever the team had set before. (The end to end
proof, a team's worker with only the plugin, is tests/test_wheel.py.)"""

from __future__ import annotations

from collections.abc import Sequence

from temporalio.api.common.v1 import Payload
from temporalio.converter import DataConverter, PayloadCodec
from temporalio.worker import UnsandboxedWorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from ag_ui_temporal import AgUiTemporalPlugin
from ag_ui_temporal.plugin import PASSTHROUGH_MODULES, data_converter, workflow_runner
from ag_ui_temporal.temporal_client import DATA_CONVERTER


class TeamCodec(PayloadCodec):
    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return list(payloads)

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return list(payloads)


def test_a_plain_client_gets_the_thread_workers_converter() -> None:
    converter = data_converter(None)
    assert converter.payload_converter_class is DATA_CONVERTER.payload_converter_class
    assert converter.payload_codec is DATA_CONVERTER.payload_codec


def test_a_team_codec_is_kept() -> None:
    codec = TeamCodec()
    converter = data_converter(DataConverter(payload_codec=codec))
    assert converter.payload_codec is codec
    assert converter.payload_converter_class is DATA_CONVERTER.payload_converter_class


def test_the_sandbox_passes_the_protocol_through_and_keeps_the_teams_own() -> None:
    theirs = SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules("team_models")
    )
    runner = workflow_runner(theirs)
    assert isinstance(runner, SandboxedWorkflowRunner)
    passed = runner.restrictions.passthrough_modules
    assert {"team_models", *PASSTHROUGH_MODULES} <= passed
    assert isinstance(workflow_runner(None), SandboxedWorkflowRunner)
    unsandboxed = UnsandboxedWorkflowRunner()
    assert workflow_runner(unsandboxed) is unsandboxed  # it shares every module already


def test_the_plugin_is_named_for_temporal() -> None:
    assert AgUiTemporalPlugin().name() == "ag_ui_temporal.AgUiTemporalPlugin"
