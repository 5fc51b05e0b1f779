"""The AG-UI interrupts spec's rules on cancels, reasons, offers and capabilities, through
the real gateway, a real Temporal server and real producer workflows.

Each refusal leaves the thread exactly as it was (`assert_refused`) and names the item
where TanStack's client shows it; the rules case by case: tests/workflows/test_interrupt_rules.py.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import httpx
import pytest
from pydantic import BaseModel
from pydantic_ai.durable_exec.temporal import PydanticAIPlugin
from temporalio import workflow
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode
from temporalio.worker import Replayer, Worker

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.temporal_client import DATA_CONVERTER
from ag_ui_temporal.worker_plugin import SANDBOX
from ag_ui_temporal.workflows.contract import (
    OFFER_INTERRUPT_SIGNAL,
    REFUSED_METADATA_KEY,
    SETTLEMENT_QUERY,
    InterruptSettled,
    SettlementQuery,
    ThreadView,
    offer_refusal,
    thread_workflow_id,
)
from ag_ui_temporal.workflows.producers import (
    INVALID_OFFER,
    INVALID_REASON,
    INVALID_RESPONSE_SCHEMA,
    offer_in_thread,
)
from ag_ui_temporal.workflows.thread.workflow import ThreadWorkflow
from tests.agui import cancel, finished, interrupts, resolve, run, thread_state
from tests.gateway.test_contract_rules import assert_refused, item_errors

EMAIL = "Send an email to ada@example.com saying hi"


async def until(client: Client, thread_id: str, check: Callable[[ThreadView], bool]) -> ThreadView:
    """Poll the thread's query until `check` holds (states, not timing)."""
    async with asyncio.timeout(30):
        while True:
            try:
                if check(state := await thread_state(client, thread_id)):
                    return state
            except RPCError:  # not started yet
                pass
            await asyncio.sleep(0.05)


# -- 5: a cancel omits the payload ---------------------------------------------------------------


async def test_rule8_a_cancel_that_carries_a_payload_is_refused(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    [pending] = interrupts(await run(http, thread_id, text=EMAIL))
    for payload in ({"approved": False}, None, False):
        refusal = await assert_refused(
            http, client, thread_id, "INVALID_RESUME",
            resume=[{**cancel(pending), "payload": payload}],
        )  # fmt: skip
        [item] = item_errors(refusal)
        assert (item["scope"], item["interruptId"]) == ("item", pending["id"])
        assert item["code"] == "invalid-payload" and "omit it" in item["message"]
    done = await run(http, thread_id, resume=[cancel(pending)])
    assert finished(done)["outcome"] == {"type": "success"}


# -- 6 and 8: producers cannot offer what is no valid interrupt ----------------------------------


class BadOffers(BaseModel):
    thread_id: str
    thread_task_queue: str


OFFERS: list[tuple[dict[str, Any], str]] = [
    ({"reason": "approval"}, INVALID_REASON),
    ({"reason": "core:approval"}, INVALID_REASON),
    ({"reason": "acme:approval:v2"}, INVALID_REASON),
    ({"reason": ""}, INVALID_REASON),
    ({"message": " "}, INVALID_OFFER),
    ({"naive_expiry": True}, INVALID_OFFER),
    ({"response_schema": True}, INVALID_RESPONSE_SCHEMA),
    ({"response_schema": {"type": "nope"}}, INVALID_RESPONSE_SCHEMA),
    ({"reason": "tool_call"}, INVALID_OFFER),  # a producer has no tool call to bind it to
]


@workflow.defn(sandboxed=False)
class OffersBadly:
    """Tries each offer of `OFFERS`; returns the `ApplicationError` type of each refusal."""

    @workflow.run
    async def run(self, offers: BadOffers) -> list[str]:
        refused = []
        for fields, _ in OFFERS:
            fields = {"message": "Go?", **fields}
            if fields.pop("naive_expiry", False):
                fields["expires_at"] = workflow.now().replace(tzinfo=None) + timedelta(days=1)
            try:
                await offer_in_thread(
                    offers.thread_id, thread_task_queue=offers.thread_task_queue, **fields
                )
            except ApplicationError as err:
                assert err.non_retryable
                refused.append(err.type or "")
        return refused


async def test_producers_cannot_offer_bad_reasons_or_offers(
    http: httpx.AsyncClient, client: Client, settings: Settings, thread_id: str
):
    queue = f"bad-offers-{uuid.uuid4().hex[:8]}"
    async with Worker(client, task_queue=queue, workflows=[OffersBadly]):
        refused = await client.execute_workflow(
            OffersBadly.run,
            BadOffers(thread_id=thread_id, thread_task_queue=settings.task_queue),
            id=f"bad-{thread_id}",
            task_queue=queue,
        )
    assert refused == [error_type for _, error_type in OFFERS]
    with pytest.raises(RPCError) as missing:  # nothing reached a thread: none was started
        await client.get_workflow_handle(thread_workflow_id(thread_id)).describe()
    assert missing.value.status == RPCStatusCode.NOT_FOUND


# -- 7: without a responseSchema, the reason decides ---------------------------------------------


class Questions(BaseModel):
    thread_id: str
    thread_task_queue: str


REASONS = ["confirmation", "input_required", "acme:review"]
"""A producer cannot ask a `tool_call` (it has no call to bind it to): what a schema-less
`tool_call` takes is checked in `tests/workflows/test_interrupt_rules.py`."""


@workflow.defn(sandboxed=False)
class AsksWithoutSchemas:
    """One question per reason of `REASONS`, none with a schema; returns their outcomes."""

    @workflow.run
    async def run(self, ask: Questions) -> list[dict[str, Any]]:
        questions = [
            await offer_in_thread(
                ask.thread_id, reason=r, message=f"{r}?", thread_task_queue=ask.thread_task_queue
            )
            for r in REASONS
        ]
        outcomes = await asyncio.gather(*(q.outcome() for q in questions))
        return [{"status": o.status, "payload": o.payload} for o in outcomes]


ANSWERS: list[Any] = [False, None, {"score": 3}]
"""A good answer per reason (`null` is a JSON value: `input_required` takes it)."""
BAD: list[tuple[int, Any]] = [(0, "yes"), (0, None)]
"""Payloads a reason cannot take (index into `REASONS`)."""


async def test_rule8_without_a_schema_the_reason_decides_the_payload(
    http: httpx.AsyncClient, client: Client, settings: Settings, thread_id: str
):
    queue = f"schemaless-{uuid.uuid4().hex[:8]}"
    async with Worker(client, task_queue=queue, workflows=[AsksWithoutSchemas]):
        owner = await client.start_workflow(
            AsksWithoutSchemas.run,
            Questions(thread_id=thread_id, thread_task_queue=settings.task_queue),
            id=f"asks-{thread_id}",
            task_queue=queue,
        )
        await until(client, thread_id, lambda s: len(s.interrupts) == len(REASONS))
        asked = interrupts(await run(http, thread_id, agent="inbox"))
        assert [i["reason"] for i in asked] == REASONS
        # a confirmation asked without a schema is a yes/no; the others stay schema-less
        assert [i.get("responseSchema") for i in asked] == [{"type": "boolean"}, None, None]

        def answers(index: int, entry: dict[str, Any] | None) -> list[dict[str, Any]]:
            good = [resolve(i, a) for i, a in zip(asked, ANSWERS, strict=True)]
            return [*good[:index], *([entry] if entry else []), *good[index + 1 :]]

        async def refused(index: int, entry: dict[str, Any], code: str) -> None:
            resume = answers(index, entry)
            refusal = await assert_refused(
                http, client, thread_id, code, agent="inbox", resume=resume
            )
            assert [e["interruptId"] for e in item_errors(refusal)] == [asked[index]["id"]]

        for index, question in enumerate(asked):  # missing payloads: never silently ignored
            missing = {"interruptId": question["id"], "status": "resolved"}
            await refused(index, missing, "INVALID_PAYLOAD")
        for index, payload in BAD:
            await refused(index, resolve(asked[index], payload), "INVALID_PAYLOAD")
        # a cancel with a payload never reaches its owner
        await refused(2, {**cancel(asked[2]), "payload": {"score": 0}}, "INVALID_RESUME")
        done = await run(http, thread_id, agent="inbox", resume=answers(len(asked), None))
        assert finished(done)["outcome"] == {"type": "success"}
        outcomes = await owner.result()
    assert outcomes == [{"status": "resolved", "payload": a} for a in ANSWERS]


# -- 8: a hand-made offer signal cannot break the thread -----------------------------------------

OWNER = "nobody-owns-this"
ASK = {"reason": "input_required", "message": "?"}
MALFORMED: list[dict[str, Any]] = [
    {"reason": "input_required", "message": "no id"},
    {**ASK, "id": 7},
    {**ASK, "id": "int-bad-reason", "reason": "approval"},
    {"id": "int-no-reason", "message": "?"},
    {"id": "int-no-message", "reason": "input_required"},
    {**ASK, "id": "int-bad-schema", "responseSchema": {"type": 5}},
    {**ASK, "id": "int-bad-expiry", "expiresAt": "tomorrow"},
    {**ASK, "id": "int-naive", "expiresAt": "2030-01-01T00:00:00"},
]
REFUSED = [offer["id"] for offer in MALFORMED if isinstance(offer.get("id"), str)]


async def test_a_malformed_offer_signal_is_dropped_and_the_thread_goes_on(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    finished(await run(http, thread_id, agent="inbox"))
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    signal: Callable[[dict[str, Any]], Awaitable[None]] = lambda interrupt: handle.signal(  # noqa: E731
        OFFER_INTERRUPT_SIGNAL, {"owner_workflow_id": OWNER, "interrupt": interrupt}
    )
    for interrupt in MALFORMED:
        await signal(interrupt)
    # signals are handled in order: once the valid one is in, every malformed one was seen
    good = {"id": "int-good", "reason": "confirmation", "message": "Still here?"}
    await signal(good)
    state = await until(client, thread_id, lambda s: bool(s.interrupts))
    assert [r.id for r in state.interrupts] == ["int-good"]
    for interrupt_id in REFUSED:  # what the owner confirms the `cancelled` it heard against
        settled = await handle.query(
            SETTLEMENT_QUERY,
            SettlementQuery(interrupt_id=interrupt_id, owner_workflow_id=OWNER),
            result_type=InterruptSettled,
        )
        assert settled.status == "cancelled"
        refusal = offer_refusal(settled)
        assert refusal is not None and refusal.code == INVALID_OFFER
        # under the server's own key: nothing in AG-UI's reserved namespace
        assert list(settled.metadata or {}) == [REFUSED_METADATA_KEY]
    # the thread runs on: it delivers the valid offer, and a schema-less confirmation
    # (a hand-made one has no default schema) takes only true or false
    [offered] = interrupts(await run(http, thread_id, agent="inbox"))
    assert offered["id"] == "int-good"
    await assert_refused(
        http, client, thread_id, "INVALID_PAYLOAD", agent="inbox", resume=[resolve(offered, "yes")]
    )
    done = await run(http, thread_id, agent="inbox", resume=[cancel(offered)])
    assert finished(done)["outcome"] == {"type": "success"}
    # no workflow task ever failed, and the history replays
    history = await handle.fetch_history()
    failed = [
        e for e in history.events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
    ]
    assert failed == []
    replayer = Replayer(
        workflows=[ThreadWorkflow],
        data_converter=DATA_CONVERTER,
        workflow_runner=SANDBOX,
        plugins=[PydanticAIPlugin()],
    )
    await replayer.replay_workflow(history)


# -- 10: capabilities tell the truth per agent ---------------------------------------------------


@pytest.mark.parametrize(("agent", "edits"), [("assistant", True), ("inbox", False)])
async def test_capabilities_per_agent(http: httpx.AsyncClient, agent: str, edits: bool):
    response = await http.get(f"/agents/{agent}/capabilities")
    assert response.status_code == 200
    loop = response.json()["humanInTheLoop"]
    assert loop["approveWithEdits"] is edits
    assert loop["interrupts"] is True and loop["supported"] is True
