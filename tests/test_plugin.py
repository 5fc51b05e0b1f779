"""`AgUiTemporalPlugin` on a team's own client and worker: the thread workers' JSON and codec
and the protocol passed through the sandbox, whatever the team had set before. (The end to
end proof, a team's worker with only the plugin on the core install, is tests/test_wheel.py.)"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from temporalio.api.common.v1 import Payload
from temporalio.converter import DataConverter, PayloadCodec
from temporalio.worker import UnsandboxedWorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from ag_ui_temporal import AgUiTemporalPlugin
from ag_ui_temporal.payloads import CODEC, PayloadConverter
from ag_ui_temporal.plugin import PASSTHROUGH_MODULES, data_converter, workflow_runner
from ag_ui_temporal.temporal_client import DATA_CONVERTER
from ag_ui_temporal.workflows.contract import OfferInterrupt, ThreadSignal


class TeamCodec(PayloadCodec):
    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return list(payloads)

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return list(payloads)


def test_a_plain_client_gets_the_core_converter_and_the_thread_workers_codec() -> None:
    converter = data_converter(None)
    assert converter.payload_converter_class is PayloadConverter
    assert converter.payload_codec is CODEC is DATA_CONVERTER.payload_codec


def test_a_team_codec_is_kept() -> None:
    codec = TeamCodec()
    converter = data_converter(DataConverter(payload_codec=codec))
    assert converter.payload_codec is codec
    assert converter.payload_converter_class is PayloadConverter


@dataclass
class Order:
    id: str
    due: datetime
    within: timedelta


def test_the_plugins_json_is_the_thread_workers_both_ways() -> None:
    """The plugin's converter (the core install's: no pydantic-ai) and the threads' (pydantic-ai's)
    write the same bytes, and each reads what the other wrote."""
    offer = OfferInterrupt(owner_workflow_id="o", interrupt={"id": "i", "message": "Ship?"})
    signal = ThreadSignal(thread_id="t", signal="offer", arg=offer.model_dump(mode="json"))
    order = Order("42", datetime(2026, 1, 2, tzinfo=UTC), timedelta(days=2))
    values: list[tuple[Any, type]] = [(signal, ThreadSignal), (order, Order), ({"a": [1]}, dict)]
    ours, threads = PayloadConverter(), DATA_CONVERTER.payload_converter
    for value, hint in values:
        [written] = ours.to_payloads([value])
        [theirs] = threads.to_payloads([value])
        assert written == theirs
        assert ours.from_payloads([theirs], [hint]) == [value]
        assert threads.from_payloads([written], [hint]) == [value]


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
