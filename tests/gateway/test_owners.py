"""Nothing open by default, through the real gateway and worker.

- A thread without an owner (a producer's that names none, a parked one from before) is
  seen, run and answered by `THREAD_ADMINS` only; a producer names who may see
  (`thread_owner=`) and who may answer (`allowed_resolvers=`).
- `inbox:P` is P's and the inbox agent's: a refused caller leaves nothing behind.
- "Not yours" and "does not exist" are the same answer, and cost the same: decided from the
  thread's memo (`describe`) before the thread is queried or sent anything.

The gateway here counts its Temporal calls (`tests/test_approvals_access.py`'s interceptor)
and has one admin, `root` (the session's gateway counts `anonymous` among its admins).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode
from temporalio.worker import Worker

from ag_ui_temporal.gateway import access
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import (
    OFFER_INTERRUPT_SIGNAL,
    THREAD_MEMO_KEY,
    THREAD_WORKFLOW,
    ThreadInput,
    thread_input,
    thread_memo,
    thread_workflow_id,
)
from ag_ui_temporal.workflows.thread.agents.inbox import NOTHING_WAITS
from tests.agui import (
    error,
    finished,
    interrupts,
    new_id,
    parse_sse,
    resolve,
    run,
    thread_state,
)
from tests.conftest import serve_gateway
from tests.gateway.threads import wait_for_new_run
from tests.test_approvals_access import CountingInterceptor, counting_client
from tests.test_offer_delivery import raw_offer
from tests.test_producers import delivered, owner_queue, owner_worker, start_order, until

__all__ = ["owner_queue"]  # a fixture

EMAIL = "Send an email to ada@example.com saying hi"
SPEED = {"speed": "express"}


@pytest.fixture(scope="module")
def counter() -> CountingInterceptor:
    return CountingInterceptor()


@pytest.fixture(scope="module")
async def gateway(
    settings: Settings, client: Client, worker: Worker, counter: CountingInterceptor
) -> AsyncIterator[httpx.AsyncClient]:
    rooted = settings.model_copy(update={"thread_admins": ["root"]})
    async with (
        serve_gateway(rooted, counting_client(client, counter)) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        yield http


def tag() -> str:
    return uuid.uuid4().hex[:8]


async def hydrate(
    http: httpx.AsyncClient, thread_id: str, principal: str, agent: str = "inbox", groups: str = ""
) -> dict[str, Any]:
    headers = {"X-Principal": principal, "X-Principal-Groups": groups}
    response = await http.get(f"/agents/{agent}", params={"threadId": thread_id}, headers=headers)
    assert response.status_code == 200, response.text
    shown: dict[str, Any] = response.json()
    return shown


async def join(
    http: httpx.AsyncClient, thread_id: str, run_id: str, principal: str, agent: str = "inbox"
) -> httpx.Response:
    params = {"runId": run_id, "threadId": thread_id, "offset": "-1"}
    return await http.get(f"/agents/{agent}", params=params, headers={"X-Principal": principal})


async def refusal(
    http: httpx.AsyncClient,
    thread_id: str,
    principal: str,
    resume: list[dict[str, Any]],
    agent: str = "inbox",
) -> str:
    """The `RUN_ERROR` a resume gets, as JSON with its thread and run ids replaced (two
    refusals compared word for word)."""
    run_id = new_id()
    events = await run(
        http, thread_id, agent=agent, principal=principal, resume=resume, run_id=run_id
    )
    return json.dumps(error(events), sort_keys=True).replace(thread_id, "T").replace(run_id, "R")


async def missing(client: Client, thread_id: str) -> bool:
    """No workflow was ever made for the thread."""
    try:
        await client.get_workflow_handle(thread_workflow_id(thread_id)).describe()
    except RPCError as err:
        return err.status == RPCStatusCode.NOT_FOUND
    return False


async def assert_hidden_like_nothing(
    http: httpx.AsyncClient,
    counter: CountingInterceptor,
    thread_id: str,
    stranger: str,
    question: dict[str, Any],
    agent: str = "inbox",
) -> None:
    """`stranger` gets for `thread_id` what it gets for a thread that does not exist, word for
    word, and the gateway asks the thread nothing for either: one `describe` each, however
    often it asked before."""
    nowhere = f"nowhere-{tag()}"
    for shown in (thread_id, nowhere):
        counter.calls.clear()
        assert await hydrate(http, shown, stranger, agent) == await hydrate(
            http, nowhere, stranger, agent
        )
        assert "query" not in counter.calls and counter.calls["describe"] == 2, counter.calls
    answers = []
    for shown in (thread_id, nowhere):
        counter.calls.clear()
        answers.append(await refusal(http, shown, stranger, [resolve(question, SPEED)], agent))
        assert "query" not in counter.calls and "update" not in counter.calls, counter.calls
        assert counter.calls["describe"] == 1, counter.calls
    assert answers[0] == answers[1]
    told = answers[0]
    assert '"code": "UNKNOWN_INTERRUPT_ID"' in told


# -- 4: a thread without an owner is the admins' only ------------------------------------------


async def test_a_producers_thread_without_an_owner_is_the_admins_only(
    gateway: httpx.AsyncClient,
    counter: CountingInterceptor,
    client: Client,
    settings: Settings,
    owner_queue: str,
):
    thread_id = f"orders-{tag()}"
    async with owner_worker(client, owner_queue):
        order = await start_order(client, settings, owner_queue, thread_id, order_id="t1")
        [own] = (await until(client, thread_id, delivered(1))).runs
        assert (await thread_state(client, thread_id)).owner is None
        shown = await hydrate(gateway, thread_id, "root")
        [question] = shown["interrupts"]["pending"]
        for stranger in ("mallory", "anonymous"):  # `anonymous` is no admin of this gateway
            await assert_hidden_like_nothing(gateway, counter, thread_id, stranger, question)
            refused = error(await run(gateway, thread_id, agent="inbox", principal=stranger))
            assert refused["code"] == "FORBIDDEN"
            assert (await join(gateway, thread_id, own.run_id, stranger)).status_code == 404
        joined = await join(gateway, thread_id, own.run_id, "root")
        assert joined.status_code == 200
        assert [i["id"] for i in interrupts(parse_sse(joined.text))] == [question["id"]]
        answer = [resolve(question, SPEED)]
        done = await run(gateway, thread_id, agent="inbox", principal="root", resume=answer)
        assert finished(done)["outcome"] == {"type": "success"}
        assert (await order.result()).speed == "express"
    [record] = [r for r in (await thread_state(client, thread_id)).interrupts if r.owner]
    assert record.resolved_by == "root"


async def test_a_producer_names_who_sees_the_thread_and_who_answers(
    gateway: httpx.AsyncClient,
    counter: CountingInterceptor,
    client: Client,
    settings: Settings,
    owner_queue: str,
):
    """The order example with `thread_owner=group:G` and `allowed_resolvers=[carol]`: every
    member of G sees the question, only carol answers it, nobody else sees the thread."""
    thread_id, group = f"orders-{tag()}", f"shipping-{tag()}"
    members = group
    async with owner_worker(client, owner_queue):
        order = await start_order(
            client, settings, owner_queue, thread_id, order_id="42",
            thread_owner=f"group:{group}", allowed_resolvers=["carol"],
        )  # fmt: skip
        await until(client, thread_id, delivered(1))
        assert (await thread_state(client, thread_id)).owner == f"group:{group}"
        [question] = interrupts(
            await run(gateway, thread_id, agent="inbox", principal="dave", groups=members)
        )
        await assert_hidden_like_nothing(gateway, counter, thread_id, "mallory", question)
        await assert_hidden_like_nothing(gateway, counter, thread_id, "root", question)
        answer = [resolve(question, SPEED)]
        refused = error(
            await run(
                gateway, thread_id, agent="inbox", principal="dave", resume=answer, groups=members
            )
        )
        assert refused["code"] == "FORBIDDEN" and "may not answer it" in refused["message"]
        done = await run(
            gateway, thread_id, agent="inbox", principal="carol", resume=answer, groups=members
        )
        assert finished(done)["outcome"] == {"type": "success"}
        result = await order.result()
    assert (result.status, result.speed) == ("shipped", "express")
    shown = await hydrate(gateway, thread_id, "dave", groups=members)  # the post reached it
    assert "Order 42 shipped (express)." in json.dumps(shown["messages"])


async def test_a_parked_thread_without_an_owner_is_closed_too(
    gateway: httpx.AsyncClient, counter: CountingInterceptor, client: Client, settings: Settings
):
    """A thread a producer started before owners and memos (no owner, no memo), parked with
    a question: strangers get the answers of a missing thread (its query decides, as nothing
    cheaper can); an admin still sees and answers it."""
    thread_id = f"parked-{tag()}"
    offer = raw_offer(f"gone-{thread_id}", "Still there?")
    await client.start_workflow(
        THREAD_WORKFLOW,
        thread_input(settings, "inbox", thread_id),  # what producers started before
        id=thread_workflow_id(thread_id),
        task_queue=settings.task_queue,
        start_signal=OFFER_INTERRUPT_SIGNAL,
        start_signal_args=[offer],
    )
    await until(client, thread_id, delivered(1))
    nowhere = f"nowhere-{tag()}"
    assert await hydrate(gateway, thread_id, "mallory") == await hydrate(
        gateway, nowhere, "mallory"
    )
    question = {**offer["interrupt"]}
    answers = [
        await refusal(gateway, shown, "mallory", [resolve(question, "yes")])
        for shown in (thread_id, nowhere)
    ]
    assert answers[0] == answers[1]
    assert error(await run(gateway, thread_id, agent="inbox", principal="mallory"))["code"] == (
        "FORBIDDEN"
    )
    [pending] = (await hydrate(gateway, thread_id, "root"))["interrupts"]["pending"]
    assert pending["id"] == question["id"]
    again = interrupts(await run(gateway, thread_id, agent="inbox", principal="root"))
    assert [i["id"] for i in again] == [question["id"]]  # an admin's run: it delivers it again


# -- 5: an inbox is its principal's and the inbox agent's ---------------------------------------


async def test_nobody_squats_another_principals_inbox(
    gateway: httpx.AsyncClient, counter: CountingInterceptor, client: Client
):
    bob = f"bob-{tag()}"
    inbox = f"inbox:{bob}"
    refusals = []
    for agent, principal in [("assistant", "mallory"), ("inbox", "mallory"), ("assistant", bob)]:
        counter.calls.clear()
        refused = error(await run(gateway, inbox, text="hi", agent=agent, principal=principal))
        refusals.append(refused["code"])
        assert not counter.calls  # refused from the id alone: no describe, query or update
        assert await missing(client, inbox)  # nothing was made
    assert refusals == ["FORBIDDEN", "FORBIDDEN", "AGENT_MISMATCH"]
    # bob's own inbox is untouched: it starts as his, on the inbox agent, and works
    assert finished(await run(gateway, inbox, agent="inbox", principal=bob))
    state = await thread_state(client, inbox)
    assert (state.agent, state.owner) == ("inbox", bob)
    said = await run(gateway, inbox, text="anything?", agent="inbox", principal=bob)
    assert NOTHING_WAITS in json.dumps(said)
    # mallory's resume there is told what a resume of an inbox that does not exist is
    question = {"id": "int-x", "reason": "input_required", "message": "?"}
    other = f"inbox:carol-{tag()}"
    answers = [
        await refusal(gateway, shown, "mallory", [resolve(question, SPEED)])
        for shown in (inbox, other)
    ]
    assert answers[0] == answers[1] and await missing(client, other)


async def test_a_producer_offering_into_an_inbox_makes_it_the_inbox_agents(
    gateway: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str
):
    carol = f"carol-{tag()}"
    inbox = f"inbox:{carol}"
    async with owner_worker(client, owner_queue):
        order = await start_order(client, settings, owner_queue, inbox, agent="assistant")
        await until(client, inbox, delivered(1))
        state = await thread_state(client, inbox)
        assert (state.agent, state.owner) == ("inbox", carol)  # whatever the producer asked
        [question] = (await hydrate(gateway, inbox, carol))["interrupts"]["pending"]
        answer = [resolve(question, SPEED)]
        await run(gateway, inbox, agent="inbox", principal=carol, resume=answer)
        assert (await order.result()).speed == "express"


# -- 6: not yours and not there: the same answer, at the same cost -----------------------------


async def test_another_principals_thread_answers_as_one_that_does_not_exist(
    gateway: httpx.AsyncClient, counter: CountingInterceptor, client: Client
):
    thread_id = f"t-{tag()}"
    [question] = interrupts(await run(gateway, thread_id, text=EMAIL, principal="bob"))
    memo = await client.get_workflow_handle(thread_workflow_id(thread_id)).describe()
    assert (await memo.memo())[THREAD_MEMO_KEY] == {"owner": "bob", "agent": "assistant"}
    await assert_hidden_like_nothing(gateway, counter, thread_id, "mallory", question, "assistant")
    # joins: the same 404 for another's run and a run that is nowhere
    [first] = (await thread_state(client, thread_id)).runs
    details = [
        (await join(gateway, shown, run_id, "mallory", "assistant"))
        .json()["detail"]
        .replace(run_id, "R")
        for shown, run_id in ((thread_id, first.run_id), (f"nowhere-{tag()}", new_id()))
    ]
    assert details[0] == details[1]
    # the owner's resume: the memo read before admits bob, so only the update
    counter.calls.clear()
    done = await run(
        gateway, thread_id, principal="bob", resume=[resolve(question, {"approved": False})]
    )
    assert finished(done)["outcome"] == {"type": "success"}
    assert counter.calls == {"update": 1}


async def test_a_request_describes_the_thread_once_at_most(
    gateway: httpx.AsyncClient, counter: CountingInterceptor, client: Client, settings: Settings
):
    """One access decision a request (`gateway.access.Access`): the owner's request after this
    process forgot the memo describes the thread once, whatever it reads next (the thread's
    view, the run's log and result); with the memo kept, none. A kept memo decides only for
    the owner it named: a thread started anew under the id is judged by its own view."""
    thread_id = f"t-{tag()}"
    [question] = interrupts(await run(gateway, thread_id, text=EMAIL, principal="bob"))
    for kept in (False, True):
        if not kept:
            access._memos.clear()
        counter.calls.clear()
        assert (await hydrate(gateway, thread_id, "bob", "assistant"))["interrupts"] is not None
        assert (counter.calls["describe"], counter.calls["query"]) == (0 if kept else 1, 1)
    access._memos.clear()
    counter.calls.clear()
    done = await run(
        gateway, thread_id, principal="bob", resume=[resolve(question, {"approved": False})]
    )
    assert finished(done)["outcome"] == {"type": "success"}
    assert (counter.calls["describe"], counter.calls["update"]) == (1, 1), counter.calls

    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    await handle.terminate("the id is taken anew")
    await client.start_workflow(
        THREAD_WORKFLOW,
        thread_input(settings, "assistant", thread_id, "carol"),
        id=handle.id,
        task_queue=settings.task_queue,
        memo=thread_memo("carol", "assistant"),
    )
    counter.calls.clear()
    assert await hydrate(gateway, thread_id, "bob", "assistant") == await hydrate(
        gateway, f"nowhere-{tag()}", "bob", "assistant"
    )


async def test_the_resume_of_what_a_run_asked_needs_no_describe(
    gateway: httpx.AsyncClient, counter: CountingInterceptor
):
    """The run that asked told the gateway whose thread it is (its result names the owner):
    the resume that answers it, on the same gateway, is one update. Not which agent's (a
    repeated POST is answered under any agent's URL): a request about another agent's thread
    still describes it. Anyone else is decided by a describe every time, and refused."""
    thread_id = f"t-{tag()}"
    [question] = interrupts(await run(gateway, thread_id, text=EMAIL, principal="bob"))
    counter.calls.clear()
    done = await run(
        gateway, thread_id, principal="bob", resume=[resolve(question, {"approved": False})]
    )
    assert finished(done)["outcome"] == {"type": "success"}
    assert counter.calls == {"update": 1}, counter.calls
    counter.calls.clear()
    assert (await hydrate(gateway, thread_id, "bob", "inbox"))["messages"] == []
    assert counter.calls == {"describe": 1}, counter.calls
    for _ in range(2):
        counter.calls.clear()
        assert await refusal(gateway, thread_id, "mallory", [resolve(question, {})], "assistant")
        assert counter.calls == {"describe": 1}, counter.calls


async def test_a_thread_from_before_the_memo_answers_the_same_through_its_query(
    gateway: httpx.AsyncClient, client: Client, settings: Settings
):
    """An owned thread started without a memo (before it existed): the thread's own refusal
    of a stranger's resume is turned into the answer for a missing thread."""
    thread_id = f"old-{tag()}"
    await client.start_workflow(
        THREAD_WORKFLOW,
        thread_input(settings, "assistant", thread_id, "bob"),
        id=thread_workflow_id(thread_id),
        task_queue=settings.task_queue,
    )
    [question] = interrupts(await run(gateway, thread_id, text=EMAIL, principal="bob"))
    nowhere = f"nowhere-{tag()}"
    answer = [resolve(question, {"approved": True})]
    answers = [
        await refusal(gateway, shown, "mallory", answer, "assistant")
        for shown in (thread_id, nowhere)
    ]
    assert answers[0] == answers[1]
    assert await hydrate(gateway, thread_id, "mallory", "assistant") == await hydrate(
        gateway, nowhere, "mallory", "assistant"
    )
    assert (await hydrate(gateway, thread_id, "bob", "assistant"))["interrupts"] is not None


async def test_the_memo_outlives_continue_as_new(
    gateway: httpx.AsyncClient, counter: CountingInterceptor, client: Client, settings: Settings
):
    thread_id = f"short-{tag()}"
    offer = raw_offer(f"owner-{thread_id}", "Still there?")
    start = ThreadInput(thread_id=thread_id, agent="inbox", history_limit=3, owner="bob")
    handle = await client.start_workflow(
        THREAD_WORKFLOW,
        start,
        id=thread_workflow_id(thread_id),
        task_queue=settings.task_queue,
        start_signal=OFFER_INTERRUPT_SIGNAL,
        start_signal_args=[offer],
        memo=thread_memo("bob", "inbox"),
    )
    await wait_for_new_run(client, thread_id, handle.result_run_id)
    await until(client, thread_id, delivered(1))
    counter.calls.clear()
    assert await hydrate(gateway, thread_id, "mallory") == {
        "messages": [], "activeRun": None, "interrupts": None, "page": {"truncated": False},
    }  # fmt: skip
    assert "query" not in counter.calls
    [pending] = (await hydrate(gateway, thread_id, "bob"))["interrupts"]["pending"]
    assert pending["id"] == offer["interrupt"]["id"]
