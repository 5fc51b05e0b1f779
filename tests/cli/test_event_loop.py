"""Which event loop each process runs on: uvloop for the gateway, the stdlib's otherwise."""

from __future__ import annotations

import asyncio

import uvloop

from ag_ui_temporal.cli import event_loop


def test_the_gateway_runs_on_uvloop() -> None:
    factory = event_loop("gateway")
    assert factory is uvloop.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        assert isinstance(runner.get_loop(), uvloop.Loop)


def test_the_worker_and_dev_keep_the_stdlib_loop() -> None:
    # the worker's workflows run in loops of their own; `dev` runs a worker too
    assert event_loop("worker") is None
    assert event_loop("dev") is None
