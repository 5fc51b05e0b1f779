"""Fixtures for the gateway tests: a worker whose `sendEmail` waits at a gate the test opens.

With the gate closed a resumed run stays "still going" for as long as the test
needs, so streaming behaviour is tested on states, not on timing.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr
from temporalio import activity
from temporalio.client import Client

from ag_ui_temporal.demo.activities import ToolActivities
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.store import Outbox, open_engine
from ag_ui_temporal.store.migrate import upgrade
from ag_ui_temporal.worker import build_worker
from ag_ui_temporal.workflows.thread.tool_calls import ToolCallInput, ToolCallOutput
from tests.audit_trails import TEST_AUDIT_KEY
from tests.conftest import TLS, new_database, serve_gateway
from tests.effects import EffectLog


class GatedTools(ToolActivities):
    def __init__(self, store_url: str, gate: threading.Event) -> None:
        super().__init__(Outbox(open_engine(store_url)))
        self.gate = gate

    @activity.defn(name="sendEmail")
    async def send_email(self, call: ToolCallInput) -> ToolCallOutput:
        if not await asyncio.to_thread(self.gate.wait, 60):
            raise RuntimeError("the test never opened the gate")
        return await super().send_email(call)


@dataclass
class Stack:
    url: str
    gate: threading.Event
    outbox: EffectLog
    settings: Settings


@pytest.fixture(scope="module")
async def stack(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[Stack]:
    name = f"gated-{uuid.uuid4().hex}"
    settings = Settings(data_dir=data_dir / name, task_queue=name)
    gate, outbox = threading.Event(), EffectLog(settings.store_url)
    async with (
        build_worker(client, settings, executor, GatedTools(settings.store_url, gate).activities()),
        serve_gateway(settings, client) as url,
    ):
        yield Stack(url, gate, outbox, settings)
    gate.set()


@pytest.fixture
async def gated(stack: Stack) -> AsyncIterator[httpx.AsyncClient]:
    stack.gate.clear()
    async with httpx.AsyncClient(base_url=stack.url, timeout=30, verify=TLS) as http:
        yield http
    stack.gate.set()


# -- threads that outgrow their workflow: a worker and gateway writing the store's archive --


@dataclass
class ArchivingStack:
    url: str
    client: Client
    settings: Settings


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A migrated-to-be store on each engine the archive runs on."""
    return new_database(request, request.param, tmp_path)


@asynccontextmanager
async def archiving_stack(
    store_url: str,
    client: Client,
    data_dir: Path,
    executor: ThreadPoolExecutor,
    *,
    prefix: str,
    history_limit: int,
) -> AsyncIterator[ArchivingStack]:
    """A worker and a gateway on a migrated store, whose threads continue as new after
    `history_limit` events (so tests push runs out of them in a few dozen runs)."""
    await upgrade(store_url)
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    settings = Settings(
        data_dir=data_dir / name,
        task_queue=name,
        database_url=SecretStr(store_url),
        audit_key=SecretStr(TEST_AUDIT_KEY),  # PostgreSQL: no development key
        thread_history_limit=history_limit,
    )
    async with build_worker(client, settings, executor), serve_gateway(settings, client) as url:
        yield ArchivingStack(url, client, settings)
