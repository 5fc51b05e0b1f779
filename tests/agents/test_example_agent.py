"""The example agent of docs/agents.md (`examples.agents.support`), loaded the way a user
loads theirs: `AGENT_MODULES` on a real worker and gateway. It is listed and described, a
large refund waits for a person's approval (edits included) and happens once, a small
one needs nobody, and the warehouse answers an external tool through `input_required`."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
from temporalio.client import Client

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.worker import build_worker
from tests.agui import finished, interrupts, resolve, run, texts, types
from tests.conftest import serve_gateway

if TYPE_CHECKING:
    from ag_ui_temporal.examples.agents.support import Refund

MODULE = "ag_ui_temporal.examples.agents.support"


@pytest.fixture(scope="module")
async def support(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[httpx.AsyncClient]:
    name = f"support-{uuid.uuid4().hex}"
    settings = Settings(data_dir=data_dir / name, task_queue=name, agent_modules=[MODULE])
    async with (
        build_worker(client, settings, executor),
        serve_gateway(settings, client) as url,
        httpx.AsyncClient(base_url=url, timeout=60) as http,
    ):
        yield http


def refunds_of(order_id: str) -> list[Refund]:
    # imported here, as the worker does: importing registers the agent in this process
    from ag_ui_temporal.examples.agents.support import REFUNDS

    return [refund for refund in REFUNDS.values() if refund.order_id == order_id]


async def test_the_agent_is_listed_and_described(support: httpx.AsyncClient):
    listed = {agent["name"]: agent for agent in (await support.get("/agents")).json()}
    assert listed["support"]["url"] == "/agents/support"
    assert listed["support"]["description"].startswith("Support: refunds")
    capabilities = (await support.get("/agents/support/capabilities")).json()
    assert capabilities["humanInTheLoop"]["approveWithEdits"] is True


async def test_a_small_refund_needs_nobody(support: httpx.AsyncClient, thread_id: str):
    done = await run(support, thread_id, agent="support", text="Refund 20 EUR on order S-1")
    assert finished(done)["outcome"] == {"type": "success"}
    assert "TOOL_CALL_RESULT" in types(done)
    assert texts(done).startswith("Refunded 20 EUR on order S-1 (rf-")
    assert len(refunds_of("S-1")) == 1


async def test_a_large_refund_is_approved_with_edits_once(
    support: httpx.AsyncClient, thread_id: str
):
    first = await run(
        support, thread_id, agent="support", text="Refund 80 EUR on order A-17", principal="ann"
    )
    [asked] = interrupts(first)
    assert asked["reason"] == "tool_call"
    assert asked["message"] == "Refund 80 EUR on order A-17?"
    binding = asked["metadata"]["tanstack:interruptBinding"]
    assert binding["toolName"] == "refund"
    assert binding["originalArgs"] == {"order_id": "A-17", "amount": 80}
    assert refunds_of("A-17") == []  # nothing happens before a person says yes

    edits = {"approved": True, "editedArgs": {"order_id": "A-17", "amount": 60}}
    answer = [resolve(asked, edits)]
    done = await run(support, thread_id, agent="support", resume=answer, principal="ann")
    assert texts(done).startswith("Refunded 60 EUR on order A-17 (rf-")
    again = await run(support, thread_id, agent="support", resume=answer, principal="ann")
    assert finished(again)["outcome"] == {"type": "success"}
    [refund] = refunds_of("A-17")  # the replayed resume refunded nothing more
    assert (refund.amount, refund.approved_by) == (60, "ann")


async def test_a_rejected_refund_is_what_the_model_hears(
    support: httpx.AsyncClient, thread_id: str
):
    [asked] = interrupts(
        await run(support, thread_id, agent="support", text="Refund 300 EUR on order R-9")
    )
    rejected = [resolve(asked, {"approved": False})]
    done = await run(support, thread_id, agent="support", resume=rejected)
    assert texts(done) == "I did not make the refund: you rejected it."
    assert refunds_of("R-9") == []


async def test_the_warehouse_answers_an_external_tool(support: httpx.AsyncClient, thread_id: str):
    text = "What is the status of order B-2?"
    [asked] = interrupts(await run(support, thread_id, agent="support", text=text))
    assert asked["reason"] == "input_required"
    assert asked["message"] == "Warehouse: what is the status of order B-2?"
    assert asked["responseSchema"]["required"] == ["status"]

    wrong = await run(
        support, thread_id, agent="support", resume=[resolve(asked, {"status": "gone"})]
    )
    assert wrong[-1]["code"] == "INVALID_PAYLOAD"
    answer = {"status": "shipped", "note": "left the depot today"}
    done = await run(support, thread_id, agent="support", resume=[resolve(asked, answer)])
    assert texts(done) == "Your order is shipped. The warehouse says: left the depot today"
