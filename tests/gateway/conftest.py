"""Fixtures for the gateway tests: a worker whose `sendEmail` waits at a gate the test opens.

With the gate closed a resumed run stays "still going" for as long as the test
needs, so streaming behaviour is tested on states, not on timing.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from temporalio import activity
from temporalio.client import Client

from settings import Settings
from tests.conftest import serve_gateway
from worker import build_worker
from workflows.activities import Outbox, ToolActivities, ToolCallInput, ToolCallOutput


class GatedTools(ToolActivities):
    def __init__(self, outbox: Outbox, gate: threading.Event) -> None:
        super().__init__(outbox)
        self.gate = gate

    @activity.defn(name="sendEmail")
    def send_email(self, call: ToolCallInput) -> ToolCallOutput:
        if not self.gate.wait(timeout=60):
            raise RuntimeError("the test never opened the gate")
        return super().send_email(call)


@dataclass
class Stack:
    url: str
    gate: threading.Event
    outbox: Outbox
    settings: Settings


@pytest.fixture(scope="module")
async def stack(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[Stack]:
    name = f"gated-{uuid.uuid4().hex}"
    settings = Settings(data_dir=data_dir / name, task_queue=name)
    gate, outbox = threading.Event(), Outbox(settings.outbox_path)
    async with (
        build_worker(client, settings, executor, GatedTools(outbox, gate)),
        serve_gateway(settings, client) as url,
    ):
        yield Stack(url, gate, outbox, settings)
    gate.set()


@pytest.fixture
async def gated(stack: Stack) -> AsyncIterator[httpx.AsyncClient]:
    stack.gate.clear()
    async with httpx.AsyncClient(base_url=stack.url, timeout=30) as http:
        yield http
    stack.gate.set()
