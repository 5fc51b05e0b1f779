"""Standing decisions (docs/agents.md#standing-decisions), on one real worker and gateway, for
each framework (`tests/agents/standing_agents.py`): an approval "from now on" lets the next
call it covers go ahead without an interrupt, recorded in the audit trail as answered by it; a
call it does not cover still asks; revoking it makes the next call ask; expiry ends it; a
rejection stands the same way; an answer that cannot stand changes nothing."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.temporal_client import DATA_CONVERTER
from ag_ui_temporal.worker import build_worker
from ag_ui_temporal.worker_plugin import ThreadWorkerPlugin
from ag_ui_temporal.workflows.contract import InterruptStatus, thread_workflow_id
from ag_ui_temporal.workflows.contract.standing import STANDING_METADATA_KEY
from ag_ui_temporal.workflows.thread.turn import STANDING_PER_RUN
from tests.agents.standing_agents import ADK, GRAPH, OPENAI, PYDANTIC, WIRES
from tests.agui import error, finished, interrupts, resolve, run, texts, thread_state
from tests.conftest import serve_gateway
from tests.copilotkit.driver import answer, requires_copilotkit, run_script, send, steps
from tests.effects import EffectLog
from tests.test_audit_trail import kinds

MODULES = ["tests.agents.standing_agents"]
HISTORIES = sorted((Path(__file__).parent / "histories").glob("standing_*.json"))
"""Recorded threads of `test_an_approval_from_now_on_answers_the_next_call_until_revoked`
(`standing_wire_…`) and `test_each_framework_goes_ahead_on_a_standing_approval`
(`standing_graph_…`, `standing_openai_…`, `standing_adk_…`), fetched with `fetch_history()`
and written with `WorkflowHistory.to_json()`: an answer that stands, a call it answered, its
revoke."""
ALWAYS = {"approved": True, "standing": {"args": "any"}}
"""Approve this call, and every later call of the tool in the thread (for the hour offered)."""


@pytest.fixture(scope="module")
async def served(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[httpx.AsyncClient]:
    name = f"standing-{uuid.uuid4().hex}"
    settings = Settings(data_dir=data_dir / name, task_queue=name, agent_modules=MODULES)
    async with (
        build_worker(client, settings, executor),
        serve_gateway(settings, client) as url,
        httpx.AsyncClient(base_url=url, timeout=60) as http,
    ):
        yield http


def replayer() -> Replayer:
    """A thread worker's replayer, with the agents these tests serve."""
    settings = Settings(agent_modules=MODULES)
    return Replayer(
        workflows=[], data_converter=DATA_CONVERTER, plugins=[ThreadWorkerPlugin(settings)]
    )


async def replays(client: Client, thread_id: str, record_as: str) -> None:
    """The thread's history replays on a worker that never saw it (`RECORD_HISTORIES`: and is
    written to `histories/standing_<record_as>.json`)."""
    history = await client.get_workflow_handle(thread_workflow_id(thread_id)).fetch_history()
    await replayer().replay_workflow(history)
    if os.environ.get("RECORD_HISTORIES"):
        path = Path(__file__).parent / "histories" / f"standing_{record_as}.json"
        path.write_text(history.to_json())


def who() -> str:
    return f"olivia-{uuid.uuid4().hex[:6]}"


async def standing(http: httpx.AsyncClient, agent: str, thread_id: str, principal: str) -> Any:
    listed = await http.get(
        f"/agents/{agent}/threads/{thread_id}/standing", headers={"X-Principal": principal}
    )
    assert listed.status_code == 200, listed.text
    return listed.json()["standing"]


async def revoke(
    http: httpx.AsyncClient, agent: str, thread_id: str, decision: str, principal: str
) -> httpx.Response:
    return await http.delete(
        f"/agents/{agent}/threads/{thread_id}/standing/{decision}",
        headers={"X-Principal": principal},
    )


def went_on(events: list[dict[str, Any]]) -> bool:
    """The run ended asking nothing."""
    return finished(events)["outcome"] == {"type": "success"}


def went_ahead(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The `CUSTOM` events that say a call went ahead (or not) on a standing decision."""
    return [
        e["value"] for e in events if e["type"] == "CUSTOM" and e["name"] == STANDING_METADATA_KEY
    ]


async def trail_until(
    http: httpx.AsyncClient,
    thread_id: str,
    principal: str,
    interrupt_id: str,
    kind: str = "answered",
) -> list[dict[str, Any]]:
    """The trail of one interrupt, once a `kind` record is in it (the thread writes beside)."""
    async with asyncio.timeout(60):
        while True:
            page = await http.get(
                "/audit", params={"threadId": thread_id}, headers={"X-Principal": principal}
            )
            assert page.status_code == 200, page.text
            records = [r for r in page.json()["records"] if r["interruptId"] == interrupt_id]
            if kind in kinds(records):
                return records
            await asyncio.sleep(0.05)


# -- a pydantic-ai agent: the whole rule ----------------------------------------------------


async def test_an_approval_from_now_on_answers_the_next_call_until_revoked(
    served: httpx.AsyncClient, client: Client, thread_id: str
):
    olivia = who()
    capabilities = (await served.get(f"/agents/{PYDANTIC}/capabilities")).json()
    assert capabilities["custom"] == {STANDING_METADATA_KEY: {"maxExpiresInSeconds": 3600}}
    [asked] = interrupts(
        await run(served, thread_id, agent=PYDANTIC, text="wire 100 to bob", principal=olivia)
    )
    offer = asked["responseSchema"]["oneOf"][0]["properties"]["standing"]
    assert offer["properties"]["expiresInSeconds"]["maximum"] == 3600
    done = await run(
        served, thread_id, agent=PYDANTIC, resume=[resolve(asked, ALWAYS)], principal=olivia
    )
    assert finished(done)["outcome"] == {"type": "success"}
    assert WIRES["bob", 100] == 1
    [decision] = await standing(served, PYDANTIC, thread_id, olivia)
    assert (decision["tool"], decision["anyArgs"], decision["approved"]) == ("wire", True, True)
    assert (decision["by"], decision["interruptId"]) == (olivia, asked["id"])
    assert decision["answer"] == {"approved": True}

    # the next call of the tool goes ahead: no interrupt, the tool ran once, the client told
    events = await run(served, thread_id, agent=PYDANTIC, text="wire 7 to eve", principal=olivia)
    assert finished(events)["outcome"] == {"type": "success"}
    assert WIRES["eve", 7] == 1
    [told] = went_ahead(events)
    assert (told["standingId"], told["approved"]) == (decision["id"], True)
    record = next(
        r for r in (await thread_state(client, thread_id)).interrupts if r.id == told["interruptId"]
    )
    assert (record.status, record.resolved_via, record.resolved_by) == (
        InterruptStatus.RESOLVED,
        "standing",
        olivia,
    )
    # recorded as asked and answered by that decision (no client saw it: not delivered)
    records = await trail_until(served, thread_id, olivia, told["interruptId"])
    assert kinds(records)[:2] == ["asked", "answered"] and "delivered" not in kinds(records)
    answered = records[1]
    assert (answered["principal"], answered["data"]["via"]) == (olivia, "standing")
    assert answered["data"]["metadata"] == {
        STANDING_METADATA_KEY: {"id": decision["id"], "interruptId": asked["id"]}
    }

    # revoked, the next call asks again
    revoked = await revoke(served, PYDANTIC, thread_id, decision["id"], olivia)
    assert revoked.status_code == 200 and revoked.json()["id"] == decision["id"]
    assert revoked.json()["revokedBy"] == olivia
    assert await standing(served, PYDANTIC, thread_id, olivia) == []
    # the trail has it too: a `revoked` record of the interrupt whose answer made it
    records = await trail_until(served, thread_id, olivia, asked["id"], kind="revoked")
    assert kinds(records) == ["asked", "delivered", "answered", "result", "revoked"]
    made, gone = records[2], records[-1]
    assert made["data"]["payload"] == ALWAYS  # the answer that made it
    assert (gone["principal"], gone["data"]["standingId"]) == (olivia, decision["id"])
    assert (gone["data"]["tool"], gone["data"]["args"]) == ("wire", "any")
    [again] = interrupts(
        await run(served, thread_id, agent=PYDANTIC, text="wire 8 to eve", principal=olivia)
    )
    assert WIRES["eve", 8] == 0
    assert (await revoke(served, PYDANTIC, thread_id, decision["id"], olivia)).status_code == 404
    no = await run(
        served, thread_id, agent=PYDANTIC, resume=[resolve(again, {"approved": False})],
        principal=olivia,
    )  # fmt: skip
    assert WIRES["eve", 8] == 0 and "you rejected it" in texts(no)
    await replays(client, thread_id, "wire_approved_from_now_on_then_revoked")


async def test_the_same_arguments_only_and_a_batch_asks_about_the_rest(
    served: httpx.AsyncClient, thread_id: str
):
    [asked] = interrupts(await run(served, thread_id, agent=PYDANTIC, text="wire 3 to carl"))
    same = {"approved": True, "standing": {"args": "same"}}
    await run(served, thread_id, agent=PYDANTIC, resume=[resolve(asked, same)])
    assert WIRES["carl", 3] == 1
    events = await run(served, thread_id, agent=PYDANTIC, text="wire 3 to carl")
    assert went_on(events) and WIRES["carl", 3] == 2
    # one batch: the covered call is answered, only the other waits; one answer runs both
    events = await run(served, thread_id, agent=PYDANTIC, text="wire 3 to carl and 4 to carl")
    [other] = interrupts(events)
    assert other["metadata"]["ag-ui-temporal:toolCall"]["arguments"] == {"amount": 4, "to": "carl"}
    assert WIRES["carl", 3] == 2  # nothing ran before the batch was answered
    await run(served, thread_id, agent=PYDANTIC, resume=[resolve(other, {"approved": True})])
    assert (WIRES["carl", 3], WIRES["carl", 4]) == (3, 1)


async def test_at_most_twenty_calls_a_run_go_ahead_on_standing_decisions(
    served: httpx.AsyncClient, thread_id: str
):
    """A model that keeps calling a covered tool is stopped by a person, not by the run's
    interrupt limit after as many model calls: past `STANDING_PER_RUN` a call asks."""
    [asked] = interrupts(await run(served, thread_id, agent=PYDANTIC, text="wire 1000 to zed"))
    await run(served, thread_id, agent=PYDANTIC, resume=[resolve(asked, ALWAYS)])
    many = ", ".join(f"{n} to zed" for n in range(1, STANDING_PER_RUN + 2))
    events = await run(served, thread_id, agent=PYDANTIC, text=f"wire {many}")
    assert len(went_ahead(events)) == STANDING_PER_RUN
    [last] = interrupts(events)
    assert (
        last["metadata"]["ag-ui-temporal:toolCall"]["arguments"]["amount"] == STANDING_PER_RUN + 1
    )
    assert WIRES["zed", 1] == 0  # one batch: nothing runs before the person answers
    await run(served, thread_id, agent=PYDANTIC, resume=[resolve(last, {"approved": True})])
    assert [WIRES["zed", n] for n in range(1, STANDING_PER_RUN + 2)] == [1] * (STANDING_PER_RUN + 1)


async def test_a_rejection_stands_too_and_expiry_ends_a_decision(
    served: httpx.AsyncClient, thread_id: str
):
    [asked] = interrupts(await run(served, thread_id, agent=PYDANTIC, text="wire 9 to mallory"))
    never = {"approved": False, "standing": {"args": "any", "expiresInSeconds": 2}}
    await run(served, thread_id, agent=PYDANTIC, resume=[resolve(asked, never)])
    events = await run(served, thread_id, agent=PYDANTIC, text="wire 10 to mallory")
    assert went_on(events) and WIRES["mallory", 10] == 0
    assert [t["approved"] for t in went_ahead(events)] == [False]
    assert "you rejected it" in texts(events)
    [decision] = await standing(served, PYDANTIC, thread_id, "anonymous")
    expires = datetime.fromisoformat(decision["expiresAt"])
    while datetime.now(UTC) <= expires:  # the decision's own deadline (wall clock: the dev server)
        await asyncio.sleep(0.1)
    assert await standing(served, PYDANTIC, thread_id, "anonymous") == []
    [again] = interrupts(await run(served, thread_id, agent=PYDANTIC, text="wire 11 to mallory"))
    assert again["toolCallId"]


async def test_answers_that_cannot_stand_are_refused_and_change_nothing(
    served: httpx.AsyncClient, client: Client, thread_id: str
):
    [asked] = interrupts(await run(served, thread_id, agent=PYDANTIC, text="wire 12 to nina"))
    before = await thread_state(client, thread_id)
    edited = {"approved": True, "editedArgs": {"amount": 1, "to": "nina"}, "standing": {}}
    too_long = {"approved": True, "standing": {"args": "any", "expiresInSeconds": 7200}}
    for payload in (edited, too_long, {"approved": True, "standing": {"args": "all"}}):
        refused = error(
            await run(served, thread_id, agent=PYDANTIC, resume=[resolve(asked, payload)])
        )
        assert refused["code"] == "INVALID_PAYLOAD", payload
    assert await thread_state(client, thread_id) == before
    assert WIRES["nina", 12] == 0
    # an agent that does not offer them (the demo assistant) refuses the key
    demo = f"{thread_id}-demo"
    [email] = interrupts(await run(served, demo, text="Send an email to ada@example.com saying hi"))
    refused = error(await run(served, demo, resume=[resolve(email, ALWAYS)]))
    assert refused["code"] == "INVALID_PAYLOAD"
    # revoking: an unknown decision, a stranger, an unknown thread: the same 404
    await run(served, thread_id, agent=PYDANTIC, resume=[resolve(asked, ALWAYS)], principal=None)
    [decision] = await standing(served, PYDANTIC, thread_id, "anonymous")
    for agent, thread, decision_id, principal in (
        (PYDANTIC, thread_id, "standing-nope", "anonymous"),
        (PYDANTIC, thread_id, decision["id"], "mallory"),
        (PYDANTIC, f"{thread_id}-none", decision["id"], "anonymous"),
    ):
        response = await revoke(served, agent, thread, decision_id, principal)
        assert response.status_code == 404, (thread, decision_id, principal)
        assert response.json()["detail"]
    assert [d["id"] for d in await standing(served, PYDANTIC, thread_id, "anonymous")] == [
        decision["id"]
    ]
    assert await standing(served, PYDANTIC, thread_id, "mallory") == []  # not hers to see


# -- LangGraph, the OpenAI Agents SDK and Google ADK: the same, through their own resumes ---


@pytest.mark.parametrize("agent", [GRAPH, OPENAI, ADK])
async def test_each_framework_goes_ahead_on_a_standing_approval(
    served: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str, agent: str
):
    olivia = who()
    ask = "Send an email to ada@example.com saying hi"
    [asked] = interrupts(await run(served, thread_id, agent=agent, text=ask, principal=olivia))
    await run(served, thread_id, agent=agent, resume=[resolve(asked, ALWAYS)], principal=olivia)
    assert len(sent(outbox, asked["toolCallId"])) == 1

    events = await run(
        served, thread_id, agent=agent, text="Send an email to bob@example.com saying hi",
        principal=olivia,
    )  # fmt: skip
    assert went_on(events)
    [told] = went_ahead(events)
    assert [
        e["args"]["to"] for e in outbox.effects("sendEmail") if e["key"] == told["toolCallId"]
    ] == ["bob@example.com"]
    [decision] = await standing(served, agent, thread_id, olivia)
    assert (await revoke(served, agent, thread_id, decision["id"], olivia)).status_code == 200
    again = await run(
        served, thread_id, agent=agent, text="Send an email to cy@example.com saying hi",
        principal=olivia,
    )  # fmt: skip
    [asked_again] = interrupts(again)
    assert sent(outbox, asked_again["toolCallId"]) == []
    await replays(client, thread_id, f"{agent.removeprefix('standing-')}_approved_from_now_on")


@pytest.mark.parametrize("path", HISTORIES, ids=[path.stem for path in HISTORIES])
async def test_recorded_histories_replay(path: Path):
    """Threads that made, applied and revoked standing decisions replay on today's code."""
    history = WorkflowHistory.from_json(thread_workflow_id(path.stem), path.read_text())
    await replayer().replay_workflow(history)


@requires_copilotkit
async def test_copilotkits_use_interrupt_approves_from_now_on(
    served: httpx.AsyncClient, outbox: EffectLog, thread_id: str
):
    """CopilotKit's real `useInterrupt` (on the `HttpAgent` it pins) answers an approval "from
    now on": the next email goes without a card, in a run whose `CUSTOM` event CopilotKit
    takes in its stride (no error), and is sent once."""
    scenario = [
        send("Send an email to ada@example.com saying hi"),
        answer({"index": 0, "payload": ALWAYS}),
        send("Send an email to bob@example.com saying hi"),
    ]
    job = {
        "agentUrl": f"{served.base_url}/agents/{OPENAI}",
        "agentId": OPENAI,
        "scenarios": [{"name": "always", "threadId": thread_id, "steps": scenario}],
    }
    asked, approved, next_one = steps(
        (await run_script("use_interrupt.mjs", job))["results"]["always"]
    )
    [interrupt] = asked.interrupts
    assert approved.post()["body"]["resume"][0]["payload"] == ALWAYS
    for step in (approved, next_one):
        step.clean()
        assert step.interrupts == [] and step.cards == []
    assert any("Sent the email to bob@example.com." in said for said in next_one.said())
    [told] = went_ahead(next_one.post().get("events") or [])
    assert len(sent(outbox, told["toolCallId"])) == 1
    assert len(sent(outbox, interrupt["toolCallId"])) == 1


def sent(outbox: EffectLog, call_id: str) -> list[dict[str, Any]]:
    return [e["args"] for e in outbox.effects("sendEmail") if e["key"] == call_id]


def test_the_offer_is_read_off_any_schema_and_a_registration_under_a_second_is_refused():
    """Pure: `offered` reads the longest decision off an approval's schema, and nothing off a
    schema of another shape (a graph's own `standing` property, say); a registration that
    offers less than a second would ask for an answer no schema admits."""
    from datetime import timedelta

    from ag_ui_temporal.workflows.contract.standing import checked_offer, offered
    from ag_ui_temporal.workflows.contract.tools import tool_approval_schema

    assert offered(tool_approval_schema(None, None, timedelta(hours=2))) == 7200
    assert offered(tool_approval_schema(None, None)) is None
    for other in (None, {"oneOf": [{"properties": {"standing": True}}]}, {"oneOf": "x"}):
        assert offered(other) is None
    with pytest.raises(ValueError, match="at least 1 s"):
        checked_offer(timedelta(milliseconds=500))
    assert checked_offer(None) is None
