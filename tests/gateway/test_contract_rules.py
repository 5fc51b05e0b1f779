"""Each AG-UI interrupt contract rule, violated on purpose.

Every violation is answered with `RUN_STARTED` + `RUN_ERROR` and a stable code,
the thread is left exactly as it was, and a correct resume still works.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import thread_workflow_id
from tests.agui import cancel, error, finished, interrupts, resolve, run, texts, thread_state, types
from tests.effects import EffectLog
from tests.gateway.threads import start_short_thread, wait_for_new_run

EMAIL = "Send an email to ada@example.com saying hi"
EMAILS = "Send emails to ada@example.com, bob@example.com and cy@example.com"


async def assert_refused(
    http: httpx.AsyncClient, client: Client, thread_id: str, code: str, **run_args: Any
) -> dict[str, Any]:
    """Run, expect `code`, and prove the thread did not change."""
    before = await thread_state(client, thread_id)
    refusal = error(await run(http, thread_id, **run_args))
    assert refusal["code"] == code, refusal
    assert await thread_state(client, thread_id) == before
    return refusal


def item_errors(refusal: dict[str, Any]) -> list[dict[str, Any]]:
    return refusal["metadata"]["tanstack"]["interruptErrors"]


async def test_rule1_interrupt_of_another_thread(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    [other] = interrupts(await run(http, f"{thread_id}-other", text=EMAIL))
    [mine] = interrupts(await run(http, thread_id, text=EMAIL))
    await assert_refused(
        http, client, thread_id, "UNKNOWN_INTERRUPT_ID",
        resume=[resolve(mine, {"approved": True}), resolve(other, {"approved": True})],
    )  # fmt: skip


async def test_rule2_unknown_interrupt_id(http: httpx.AsyncClient, client: Client, thread_id: str):
    first = await run(http, thread_id, text=EMAIL)
    [pending] = interrupts(first)
    refusal = await assert_refused(
        http, client, thread_id, "UNKNOWN_INTERRUPT_ID",
        resume=[{"interruptId": "int-nope", "status": "resolved", "payload": {"approved": True}}],
        parent_run_id=first[0]["runId"],
    )  # fmt: skip
    [item] = item_errors(refusal)
    assert item["scope"] == "item" and item["code"] == "unknown-interrupt"
    assert item["interruptId"] == "int-nope"
    assert item["interruptedRunId"] == first[0]["runId"]
    done = await run(http, thread_id, resume=[resolve(pending, {"approved": True})])
    assert "Sent the email" in texts(done)


async def test_rule2_resume_of_a_thread_that_never_was(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    """Answered like any unknown interrupt, and no thread is started by the refusal."""
    refusal = error(
        await run(http, thread_id, resume=[resolve({"id": "int-nope"}, {"approved": True})])
    )
    assert refusal["code"] == "UNKNOWN_INTERRUPT_ID", refusal
    assert [item["interruptId"] for item in item_errors(refusal)] == ["int-nope"]
    with pytest.raises(RPCError) as missing:
        await client.get_workflow_handle(thread_workflow_id(thread_id)).describe()
    assert missing.value.status == RPCStatusCode.NOT_FOUND


async def test_rule3_partial_resume(http: httpx.AsyncClient, client: Client, thread_id: str):
    first = await run(http, thread_id, text=EMAILS)
    ada, bob, cy = interrupts(first)
    refusal = await assert_refused(
        http, client, thread_id, "PARTIAL_RESUME", resume=[resolve(ada, {"approved": True})]
    )
    [batch] = item_errors(refusal)
    assert batch["scope"] == "batch" and batch["code"] == "incomplete-batch"
    assert batch["interruptIds"] == [bob["id"], cy["id"]]
    done = await run(http, thread_id, resume=[cancel(ada), cancel(bob), cancel(cy)])
    assert finished(done)["outcome"] == {"type": "success"}


async def test_rule4_new_input_while_open(http: httpx.AsyncClient, client: Client, thread_id: str):
    [pending] = interrupts(await run(http, thread_id, text=EMAIL))
    await assert_refused(http, client, thread_id, "RESUME_REQUIRED", text="never mind, hello")
    done = await run(http, thread_id, resume=[cancel(pending)])
    assert "it was cancelled" in texts(done)


async def test_rule5_replay_is_idempotent(
    http: httpx.AsyncClient, client: Client, thread_id: str, outbox: EffectLog
):
    [pending] = interrupts(await run(http, thread_id, text=EMAIL))
    answer = [resolve(pending, {"approved": True})]
    done = await run(http, thread_id, resume=answer)
    again = await run(http, thread_id, resume=answer)
    assert types(again) == types(done)
    assert texts(again) == texts(done)
    assert [e["key"] for e in outbox.effects()].count(pending["toolCallId"]) == 1
    await assert_refused(
        http, client, thread_id, "INTERRUPT_ALREADY_RESOLVED",
        resume=[resolve(pending, {"approved": False})],
    )  # fmt: skip


async def test_rule5_same_run_sent_twice(
    http: httpx.AsyncClient, thread_id: str, outbox: EffectLog
):
    [pending] = interrupts(await run(http, thread_id, text=EMAIL))
    answer = [resolve(pending, {"approved": True})]
    done = await run(http, thread_id, resume=answer, run_id="run-once")
    again = await run(http, thread_id, resume=answer, run_id="run-once")
    assert again == done
    assert [e["key"] for e in outbox.effects()].count(pending["toolCallId"]) == 1


async def test_rule6_payload_checked_against_schema(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    [form] = interrupts(await run(http, thread_id, text="File the quarterly report"))
    for bad in (
        {"quarter": "Q5", "year": 2026, "revenue": 1},
        {"quarter": "Q1", "year": 1999, "revenue": 1},
        {"quarter": "Q1", "year": 2026.5, "revenue": 1},
        {"quarter": "Q1", "year": 2026},
        {"quarter": "Q1", "year": 2026, "revenue": "lots"},
        {"quarter": "Q1", "year": 2026, "revenue": 1, "extra": True},
    ):
        refusal = await assert_refused(
            http, client, thread_id, "INVALID_PAYLOAD", resume=[resolve(form, bad)]
        )
        [item] = item_errors(refusal)
        assert (item["code"], item["interruptId"]) == ("invalid-payload", form["id"])
    done = await run(
        http, thread_id, resume=[resolve(form, {"quarter": "Q1", "year": 2026, "revenue": 10})]
    )
    assert "Filed the Q1 2026 quarterly report" in texts(done)


async def test_rule6_formats_are_checked(http: httpx.AsyncClient, client: Client, thread_id: str):
    [pending] = interrupts(await run(http, thread_id, text=EMAIL))
    edited = {"to": "not an email", "subject": "s", "body": "b"}
    await assert_refused(
        http, client, thread_id, "INVALID_PAYLOAD",
        resume=[resolve(pending, {"approved": True, "editedArgs": edited})],
    )  # fmt: skip


async def test_rule8_missing_or_malformed_payload(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    [pending] = interrupts(await run(http, thread_id, text=EMAIL))
    missing = {"interruptId": pending["id"], "status": "resolved"}
    await assert_refused(http, client, thread_id, "INVALID_PAYLOAD", resume=[missing])
    await assert_refused(
        http, client, thread_id, "INVALID_PAYLOAD", resume=[resolve(pending, None)]
    )
    await assert_refused(
        http, client, thread_id, "INVALID_PAYLOAD", resume=[resolve(pending, {"approved": "yes"})]
    )
    await assert_refused(
        http, client, thread_id, "INVALID_RESUME", resume=[cancel(pending), cancel(pending)]
    )


async def test_rule5_replay_after_continue_as_new(
    http: httpx.AsyncClient, client: Client, outbox: EffectLog, settings: Settings, thread_id: str
):
    # A thread with a tiny history limit continues as new right after each run.
    handle = await start_short_thread(client, settings, thread_id, history_limit=12)
    [pending] = interrupts(await run(http, thread_id, text=EMAIL))
    answer = [resolve(pending, {"approved": True})]
    done = await run(http, thread_id, resume=answer)
    await wait_for_new_run(client, thread_id, handle.result_run_id)
    again = await run(http, thread_id, resume=answer)
    assert texts(again) == texts(done)
    assert [e["key"] for e in outbox.effects()].count(pending["toolCallId"]) == 1
    state = await thread_state(client, thread_id)
    assert [m["role"] for m in state.messages] == ["user", "assistant", "tool", "assistant"]
