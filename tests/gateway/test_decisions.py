"""The decision API, `POST /interrupts/{id}`: one answer to one interrupt, outside the chat.

Producers (`examples.orders.OrderWorkflow`) offer questions in inbox threads; each decision
goes through the real gateway to the thread's `run` update on the session's dev server, and
every refusal is checked to have changed nothing.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from ag_ui_temporal.examples.orders import OrderWorkflow
from ag_ui_temporal.gateway.decision_ids import RunIdKey, decision_run_id
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.store import ServerSecrets, open_engine
from ag_ui_temporal.workflows.contract import (
    RUN_UPDATE,
    SETTLEMENT_QUERY,
    InterruptSettled,
    InterruptStatus,
    InterruptView,
    ResumeItem,
    RunRequest,
    RunResult,
    SettlementQuery,
    run_digest,
    run_update_id,
    server_run_id,
    thread_workflow_id,
)
from ag_ui_temporal.workflows.contract.resume import answer_digest
from tests.agui import interrupts, resolve, run, thread_state
from tests.test_producers import (
    delivered,
    owned,
    owner_worker,
    start_order,
    until,
)

EXPRESS = {"speed": "express"}
STANDARD = {"speed": "standard"}


@pytest.fixture
def owner_queue() -> str:
    return f"owners-{uuid.uuid4().hex[:8]}"


def person(name: str) -> str:
    """A principal of the test's own: an inbox nobody else writes to."""
    return f"{name}-{uuid.uuid4().hex[:6]}"


async def decide(
    http: httpx.AsyncClient, interrupt_id: str, principal: str | None, **body: Any
) -> httpx.Response:
    body.setdefault("status", "resolved")
    headers = {"X-Principal": principal} if principal else None
    return await http.post(f"/interrupts/{interrupt_id}", json=body, headers=headers)


def refused(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["code"] == code and body["message"], body
    return body


async def question(client: Client, thread: str) -> InterruptView:
    """The order's question once the thread delivered it."""
    [record] = owned(await until(client, thread, delivered(1)))
    return record


async def test_one_of_several_offers_in_an_inbox_is_decided_alone(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str
):
    """Two orders' questions wait in carol's inbox: deciding B alone (a partial resume) settles
    it, and A still waits for its own answer."""
    carol = person("carol")
    inbox = f"inbox:{carol}"
    async with owner_worker(client, owner_queue):
        first = await start_order(client, settings, owner_queue, inbox, order_id="A")
        a = await question(client, inbox)
        second = await start_order(client, settings, owner_queue, inbox, order_id="B")
        state = await until(client, inbox, delivered(2))
        [b] = [r for r in owned(state) if r.id != a.id]

        response = await decide(http, b.id, carol, payload=STANDARD)
        assert response.status_code == 200, response.text
        decided = response.json()
        assert decided == {
            "interruptId": b.id,
            "threadId": inbox,
            "status": "resolved",
            "runId": decided["runId"],
            "replayed": False,
        }
        assert decided["runId"].startswith("decision-")
        heard = await second.result()
        assert (heard.speed, heard.decided_by, heard.via) == ("standard", carol, "api")
        state = await thread_state(client, inbox)
        by_id = {r.id: r for r in state.interrupts}
        assert by_id[a.id].status == InterruptStatus.OPEN
        assert by_id[b.id].status == InterruptStatus.RESOLVED
        assert (by_id[b.id].resolved_by, by_id[b.id].resolved_via) == (carol, "api")

        response = await decide(http, a.id, carol, payload=EXPRESS)
        assert response.status_code == 200, response.text
        assert (await first.result()).speed == "express"
    # the thread's own runs (which delivered the offers) and the decisions' runs: every one
    # an id no client may send
    runs = [r.run_id for r in (await thread_state(client, inbox)).runs]
    assert len(runs) >= 3 and all(server_run_id(run_id) for run_id in runs), runs


async def test_an_interrupt_nobody_may_see_is_not_found(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str
):
    carol, mallory = person("carol"), person("mallory")
    inbox = f"inbox:{carol}"
    nothing = refused(
        await decide(http, "int-nope", carol, payload=EXPRESS), 404, "UNKNOWN_INTERRUPT_ID"
    )
    async with owner_worker(client, owner_queue):
        await start_order(client, settings, owner_queue, inbox)
        asked = await question(client, inbox)
        before = await thread_state(client, inbox)
        # the same answer as for an interrupt that does not exist: existence does not leak
        for sender, thread in ((mallory, inbox), (mallory, None), (carol, f"inbox:{mallory}")):
            fields = {"threadId": thread} if thread else {}
            response = await decide(http, asked.id, sender, payload=EXPRESS, **fields)
            assert refused(response, 404, "UNKNOWN_INTERRUPT_ID") == nothing
        unknown = await decide(http, "int-nope", carol, threadId=inbox, payload=EXPRESS)
        assert refused(unknown, 404, "UNKNOWN_INTERRUPT_ID")
        assert await thread_state(client, inbox) == before


async def test_only_an_allowed_resolver_may_decide(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str
):
    carol, dave = person("carol"), person("dave")
    inbox = f"inbox:{carol}"
    async with owner_worker(client, owner_queue):
        await start_order(client, settings, owner_queue, inbox, allowed_resolvers=[dave])
        asked = await question(client, inbox)
        before = await thread_state(client, inbox)
        refused(await decide(http, asked.id, carol, payload=EXPRESS), 403, "FORBIDDEN")
        assert await thread_state(client, inbox) == before


async def test_a_wrong_answer_is_refused_and_changes_nothing(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str
):
    carol = person("carol")
    inbox = f"inbox:{carol}"
    async with owner_worker(client, owner_queue):
        order = await start_order(client, settings, owner_queue, inbox)
        asked = await question(client, inbox)
        before = await thread_state(client, inbox)
        wrong: list[tuple[dict[str, Any], str]] = [
            ({"payload": {"speed": "warp"}}, "INVALID_PAYLOAD"),
            ({}, "INVALID_PAYLOAD"),  # a resolve needs a payload
            ({"status": "cancelled", "payload": None}, "INVALID_RESUME"),  # a cancel has none
            ({"payload": EXPRESS, "metadata": {"ag-ui": {"via": "x"}}}, "INVALID_RESUME"),
            ({"payload": EXPRESS, "metadata": {"ag-ui:signature": "x"}}, "INVALID_RESUME"),
            ({"payload": {"speed": "x" * (settings.max_payload_bytes + 1)}}, "LIMIT_EXCEEDED"),
            ({"payload": EXPRESS, "metadata": {"deep": nested(settings.max_json_depth)}},
             "LIMIT_EXCEEDED"),
        ]  # fmt: skip
        for body, code in wrong:
            refused(await decide(http, asked.id, carol, **body), 422, code)
        for body in ({"payload": EXPRESS}, {"status": "maybe"}, {"status": "resolved", "via": "x"}):
            response = await http.post(
                f"/interrupts/{asked.id}", json=body, headers={"X-Principal": carol}
            )
            assert response.status_code == 422, body  # FastAPI's: the body's shape
        assert await thread_state(client, inbox) == before
        response = await decide(http, asked.id, carol, payload=EXPRESS)
        assert response.status_code == 200, response.text
        assert (await order.result()).speed == "express"


def nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value


async def test_an_expired_interrupt_takes_no_answer_but_a_cancel(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str
):
    carol = person("carol")
    inbox = f"inbox:{carol}"
    async with owner_worker(client, owner_queue):
        order = await start_order(client, settings, owner_queue, inbox, expires_in_seconds=2)
        # delivered or not (a busy machine may take longer than its 2 s): it expires alike
        [asked] = owned(await until(client, inbox, lambda s: bool(owned(s))))
        heard = await order.result()  # the owner's own timer
        assert (heard.status, heard.decided_by, heard.via) == ("expired", None, None)
        await until(client, inbox, lambda s: owned(s)[0].status == InterruptStatus.EXPIRED)
    refused(await decide(http, asked.id, carol, payload=EXPRESS), 409, "INTERRUPT_EXPIRED")
    state = await thread_state(client, inbox)
    assert [r.status for r in owned(state)] == [InterruptStatus.EXPIRED]
    response = await decide(http, asked.id, carol, status="cancelled")  # acknowledged
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "cancelled"
    # What the owner would confirm: an expiry, by nobody, also once carol acknowledged it.
    query = SettlementQuery(interrupt_id=asked.id, owner_workflow_id=order.id)
    thread = client.get_workflow_handle(thread_workflow_id(inbox))
    recorded = await thread.query(SETTLEMENT_QUERY, query, result_type=InterruptSettled)
    assert (recorded.status, recorded.principal, recorded.via) == ("expired", None, None)


async def test_a_withdrawn_interrupt_takes_no_answer(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str
):
    carol = person("carol")
    inbox = f"inbox:{carol}"
    async with owner_worker(client, owner_queue):
        order = await start_order(client, settings, owner_queue, inbox)
        asked = await question(client, inbox)
        await order.signal(OrderWorkflow.decided_elsewhere, "standard")
        await order.result()
        await until(client, inbox, lambda s: owned(s)[0].status == InterruptStatus.WITHDRAWN)
    before = await thread_state(client, inbox)
    refused(await decide(http, asked.id, carol, payload=EXPRESS), 409, "INTERRUPT_WITHDRAWN")
    assert await thread_state(client, inbox) == before


async def test_the_same_decision_again_answers_the_same(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str
):
    carol = person("carol")
    inbox = f"inbox:{carol}"
    async with owner_worker(client, owner_queue):
        order = await start_order(client, settings, owner_queue, inbox)
        asked = await question(client, inbox)
        first = await decide(http, asked.id, carol, payload=EXPRESS, metadata={"note": "fast"})
        assert first.status_code == 200, first.text
        assert first.json()["replayed"] is False
        again = await decide(http, asked.id, carol, payload=EXPRESS)
        assert again.status_code == 200, again.text
        assert again.json() == {**first.json(), "replayed": True}
        other = await decide(http, asked.id, carol, payload=STANDARD)
        refused(other, 409, "INTERRUPT_ALREADY_RESOLVED")
        assert (await order.result()).speed == "express"

        # answered in the chat first: the same answer through the API is that answer
        dave = person("dave")
        chat = await start_order(client, settings, owner_queue, f"inbox:{dave}")
        await question(client, f"inbox:{dave}")
        shown = (
            await http.get(
                "/agents/inbox", params={"threadId": f"inbox:{dave}"}, headers={"X-Principal": dave}
            )
        ).json()
        [item] = shown["interrupts"]["pending"]
        await run(
            http, f"inbox:{dave}", agent="inbox", principal=dave, resume=[resolve(item, STANDARD)]
        )
        assert (await chat.result()).speed == "standard"
    repeat = await decide(http, item["id"], dave, payload=STANDARD)
    assert repeat.status_code == 200, repeat.text
    assert repeat.json()["replayed"] is True
    refused(
        await decide(http, item["id"], dave, payload=EXPRESS), 409, "INTERRUPT_ALREADY_RESOLVED"
    )


async def test_any_thread_takes_a_decision(http: httpx.AsyncClient, client: Client, thread_id: str):
    """Not only inboxes: the assistant's approval, decided through the API, runs the tool and
    the rest of the run before the answer comes back."""
    [approval] = interrupts(
        await run(http, thread_id, text="Send an email to ada@example.com saying hi")
    )
    response = await decide(
        http, approval["id"], None, threadId=thread_id, payload={"approved": True}
    )
    assert response.status_code == 200, response.text
    state = await thread_state(client, thread_id)
    assert [r.status for r in state.interrupts] == [InterruptStatus.RESOLVED]
    assert "Sent the email to ada@example.com" in str(state.messages[-1])


async def test_decision_links_are_off_without_a_secret(http: httpx.AsyncClient):
    for method in ("GET", "POST"):
        response = await http.request(method, "/decisions/abc.def.ghi")
        assert response.status_code == 404
        assert response.headers["content-type"].startswith("text/html")
        assert "not enabled" in response.text
        assert response.headers["cache-control"] == "no-store"


def public_run_id(principal: str, thread_id: str, interrupt_id: str, payload: Any) -> str:
    """The id a decision's run had before it was keyed: a digest of what the thread shows."""
    key = json.dumps([principal, thread_id, interrupt_id, answer_digest("resolved", payload)])
    return f"decision-{hashlib.sha256(key.encode()).hexdigest()[:24]}"


async def test_a_co_owner_cannot_swallow_the_approvers_decision(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str
):
    """The team's thread, whose question only bob may answer: dave (a member) sends an empty
    run under the id bob's decision is sent with. Bob's decision is applied, or refused with
    a code and nothing changed: never a 200 for an answer the thread does not have."""
    team, bob, dave = person("team"), person("bob"), person("dave")
    thread_id = f"orders-{uuid.uuid4().hex[:8]}"
    as_bob = {"X-Principal": bob, "X-Principal-Groups": team}
    async with owner_worker(client, owner_queue):
        order = await start_order(
            client, settings, owner_queue, thread_id,
            thread_owner=f"group:{team}", allowed_resolvers=[bob],
        )  # fmt: skip
        asked = await question(client, thread_id)
        claimed = public_run_id(bob, thread_id, asked.id, EXPRESS)
        body = {"threadId": thread_id, "runId": claimed, "messages": []}
        await http.post(
            "/agents/inbox", json=body, headers={"X-Principal": dave, "X-Principal-Groups": team}
        )
        response = await http.post(
            f"/interrupts/{asked.id}",
            json={"threadId": thread_id, "status": "resolved", "payload": EXPRESS},
            headers=as_bob,
        )
        [record] = owned(await thread_state(client, thread_id))
        if response.status_code == 200:
            assert response.json()["replayed"] is False
            key = await deployment_key(settings)  # every replica derives the same id
            mine = decision_run_id(key, bob, thread_id, asked.id, "resolved", EXPRESS)
            assert response.json()["runId"] == record.resolved_by_run == mine != claimed
            assert record.status == InterruptStatus.RESOLVED
            assert (record.resolved_by, record.resolved_via) == (bob, "api")
            assert (await order.result()).speed == "express"
        else:
            refused(response, 409, response.json().get("code", "?"))
            assert record.status == InterruptStatus.OPEN and record.resolution is None


async def deployment_key(settings: Settings) -> bytes:
    """The key decision run ids are derived with, as another gateway replica reads it."""
    engine = open_engine(settings.store_url)
    try:
        return await RunIdKey(ServerSecrets(engine)).get()
    finally:
        await engine.dispose()


async def test_a_run_under_the_decisions_own_id_does_not_pass_for_it(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str
):
    """A run sent past the gateway (an older gateway, anyone with Temporal's API and the
    deployment's key) under the very id bob's decision gets, answering nothing: bob's decision
    is refused with `RUN_ID_TAKEN` and changes nothing; the chat still takes his answer."""
    team, bob, dave = person("team"), person("bob"), person("dave")
    thread_id = f"orders-{uuid.uuid4().hex[:8]}"
    as_bob = {"X-Principal": bob, "X-Principal-Groups": team}
    async with owner_worker(client, owner_queue):
        order = await start_order(
            client, settings, owner_queue, thread_id,
            thread_owner=f"group:{team}", allowed_resolvers=[bob],
        )  # fmt: skip
        asked = await question(client, thread_id)
        taken = decision_run_id(
            await deployment_key(settings), bob, thread_id, asked.id, "resolved", EXPRESS
        )
        empty = RunRequest(
            thread_id=thread_id, run_id=taken, agent="inbox", principal=dave, groups=[team]
        )
        handle = client.get_workflow_handle(thread_workflow_id(thread_id))
        # under the very update id bob's decision is sent as: Temporal answers his with this
        decision = ResumeItem(interrupt_id=asked.id, status="resolved", payload=EXPRESS)
        brings = run_digest(empty.model_copy(update={"resume": [decision]}))
        await handle.execute_update(
            RUN_UPDATE, empty, id=run_update_id(taken, brings), result_type=RunResult
        )
        before = await thread_state(client, thread_id)
        body = {"threadId": thread_id, "status": "resolved", "payload": EXPRESS}
        for _ in range(2):  # the same again: the same answer
            response = await http.post(f"/interrupts/{asked.id}", json=body, headers=as_bob)
            refused(response, 409, "RUN_ID_TAKEN")
        assert await thread_state(client, thread_id) == before
        item = asked.model_dump(mode="json")["interrupt"]
        done = await run(
            http, thread_id, agent="inbox", principal=bob, groups=team,
            resume=[resolve(item, EXPRESS)],
        )  # fmt: skip
        assert done[-1]["type"] == "RUN_FINISHED"
        assert (await order.result()).speed == "express"
