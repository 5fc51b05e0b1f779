"""`GET /inbox`: a person's task list, read from their own inbox thread on the real gateway and
Temporal; and the chain's history in sentences (`GET /approvals/{chain}`), which its cards show.

Two chains seat the same approver: both items are listed at once, the more urgent first,
with their chain's title, step, requester, request, other seats and allowed delegates;
an answer sent through the decision API shows as the item's answer, with when and how.
Only the caller's own inbox is ever read: no parameter names another's.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client
from temporalio.worker import Worker

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.chains.definitions import ChainDefinition, ChainInput, ChainStep
from ag_ui_temporal.workflows.chains.starting import start_chain
from tests.conftest import serve_gateway


class People:
    """Fresh principals per test (fresh inbox threads), with display names for some."""

    def __init__(self) -> None:
        tag = uuid.uuid4().hex[:6]
        self.alice, self.bob, self.carol, self.dana = (
            f"{name}-{tag}" for name in ("alice", "bob", "carol", "dana")
        )
        self.names = {self.alice: "Alice Adams", self.bob: "Bob Baker", self.carol: "Carol Chen"}


@pytest.fixture
def people() -> People:
    return People()


@pytest.fixture
async def inbox_http(
    settings: Settings, client: Client, worker: Worker, people: People, tmp_path: Path
) -> AsyncIterator[httpx.AsyncClient]:
    """The gateway with a directory file naming the test's people (the session's worker runs
    the chains and the inbox threads)."""
    directory = tmp_path / "directory.json"
    directory.write_text(json.dumps({p: {"name": n} for p, n in people.names.items()}))
    served = settings.model_copy(update={"directory_file": directory})
    async with (
        serve_gateway(served, client) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        yield http


async def start(
    client: Client, settings: Settings, people: People, step: ChainStep, title: str
) -> str:
    chain_id = f"inbox-list-{uuid.uuid4().hex[:10]}"
    definition = ChainDefinition(
        name="expense",
        steps=[step],
        delegates=[people.dana],
    )
    chain = ChainInput(
        chain_id=chain_id,
        definition=definition,
        title=title,
        requester=people.alice,
        request={"amount": 42, "currency": "EUR", "description": title},
        thread_task_queue=settings.task_queue,
    )
    assert await start_chain(client, chain, task_queue=settings.task_queue)
    return chain_id


async def inbox(
    http: httpx.AsyncClient, principal: str, params: dict[str, str] | None = None
) -> dict[str, Any]:
    response = await http.get("/inbox", params=params, headers={"X-Principal": principal})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def until(
    http: httpx.AsyncClient, principal: str, check: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    """The caller's list once `check` holds (the chains' offers arrive on their own)."""
    async with asyncio.timeout(60):
        while not check(listed := await inbox(http, principal)):
            await asyncio.sleep(0.05)
    return listed


def waiting(listed: dict[str, Any]) -> list[dict[str, Any]]:
    return [item for item in listed["items"] if item["status"] == "waiting"]


def seated(listed: dict[str, Any], later: str | None, sooner: str) -> bool:
    """The chains' waiting items are listed, the shared chain's with its other seat (the
    chain's summary names both of its seats)."""
    chains = {i["approval"]["chainId"]: i["approval"] for i in waiting(listed) if i["approval"]}
    shared = chains.get(sooner)
    return (later is None or later in chains) and shared is not None and bool(shared["seats"])


async def two_chains(client: Client, settings: Settings, people: People) -> tuple[str, str]:
    """`later`: bob alone, answer within 2 h; `sooner`: bob and carol (both must approve),
    within 1 h."""
    later = await start(
        client,
        settings,
        people,
        ChainStep(name="manager", approvers=[people.bob], expires_in=timedelta(hours=2)),
        "taxi to the airport",
    )
    sooner = await start(
        client,
        settings,
        people,
        ChainStep(
            name="finance",
            approvers=[people.bob, people.carol],
            quorum=2,
            expires_in=timedelta(hours=1),
        ),
        "hotel in Lyon",
    )
    return later, sooner


async def test_two_waiting_items_from_two_chains_in_one_list(
    inbox_http: httpx.AsyncClient, client: Client, settings: Settings, people: People
) -> None:
    later, sooner = await two_chains(client, settings, people)
    listed = await until(inbox_http, people.bob, lambda body: seated(body, later, sooner))

    assert listed["threadId"] == f"inbox:{people.bob}"
    first, second = waiting(listed)
    assert [first["approval"]["chainId"], second["approval"]["chainId"]] == [sooner, later]
    assert first["expiresAt"] < second["expiresAt"]  # the most urgent first
    assert first["reason"] == second["reason"] == "temporal:approval"
    assert first["answer"] is None and first["responseSchema"]["properties"]["decision"]
    hotel = first["approval"]
    assert hotel["title"] == "hotel in Lyon"
    assert (hotel["step"], hotel["requester"]) == ("finance", people.alice)
    assert hotel["request"] == {"amount": 42, "currency": "EUR", "description": "hotel in Lyon"}
    assert hotel["seats"] == [{"principal": people.carol, "status": "waiting"}]  # not bob's own
    assert hotel["delegates"] == [people.dana]  # not the requester, nobody seated already
    taxi = second["approval"]
    assert (taxi["title"], taxi["step"], taxi["seats"]) == ("taxi to the airport", "manager", [])
    assert taxi["delegates"] == [people.dana]
    # the names of the people the items name, and only those the directory knows
    assert listed["names"] == {
        people.alice: "Alice Adams",
        people.bob: "Bob Baker",
        people.carol: "Carol Chen",
    }


async def test_an_answered_item_says_what_was_answered_when_and_how(
    inbox_http: httpx.AsyncClient, client: Client, settings: Settings, people: People
) -> None:
    later, sooner = await two_chains(client, settings, people)
    listed = await until(inbox_http, people.bob, lambda body: seated(body, later, sooner))
    taxi = next(i for i in waiting(listed) if i["approval"]["chainId"] == later)

    payload = {"decision": "approve", "comment": "fine"}
    decided = await inbox_http.post(
        f"/interrupts/{taxi['id']}",
        json={"threadId": listed["threadId"], "status": "resolved", "payload": payload},
        headers={"X-Principal": people.bob},
    )
    assert decided.status_code == 200, decided.text

    after = await inbox(inbox_http, people.bob)
    assert [i["approval"]["chainId"] for i in waiting(after)] == [sooner]  # still waits
    answered = after["items"][-1]  # answered items come after every waiting one
    assert answered["id"] == taxi["id"] and answered["status"] == "resolved"
    answer = answered["answer"]
    assert (answer["status"], answer["payload"], answer["via"]) == ("resolved", payload, "api")
    assert answer["at"] and answered["endedAt"] == answer["at"]

    # The chain's history, as the card's "History" shows it: sentences, names, no ids.
    async with asyncio.timeout(60):
        while True:
            chain = await inbox_http.get(f"/approvals/{later}", headers={"X-Principal": people.bob})
            assert chain.status_code == 200, chain.text
            texts = [line["text"] for line in chain.json()["history"]]
            if "The request was approved." in texts:
                break
            await asyncio.sleep(0.05)
    assert texts == [
        "Alice Adams submitted the request.",
        "Step manager started: 1 of Bob Baker must approve.",
        "Offered to Bob Baker.",
        "Bob Baker approved (through the API), note: 'fine'.",
        "Step manager was approved.",
        "The request was approved.",
    ]
    body = chain.json()
    assert body["audit"] and body["steps"]  # the chain's own view is all still there
    assert isinstance(body["notifications"], list)
    assert body["names"][people.alice] == "Alice Adams"


async def test_only_the_callers_own_inbox_is_listed(
    inbox_http: httpx.AsyncClient, client: Client, settings: Settings, people: People
) -> None:
    later, sooner = await two_chains(client, settings, people)
    bobs = await until(inbox_http, people.bob, lambda body: seated(body, later, sooner))
    carols = await until(inbox_http, people.carol, lambda body: seated(body, None, sooner))

    # carol sees her own seat of the shared chain, nothing of bob's
    [hers] = carols["items"]
    assert hers["approval"]["chainId"] == sooner
    assert hers["approval"]["seats"] == [{"principal": people.bob, "status": "waiting"}]
    assert hers["id"] not in {item["id"] for item in bobs["items"]}
    assert carols["threadId"] == f"inbox:{people.carol}"

    # a stranger lists an empty inbox of their own, whatever the query names
    mallory = f"mallory-{uuid.uuid4().hex[:6]}"
    queries: list[dict[str, str]] = [
        {},
        {"principal": people.bob},
        {"threadId": f"inbox:{people.bob}"},
    ]
    for params in queries:
        stranger = await inbox(inbox_http, mallory, params)
        assert stranger == {"items": [], "names": {}, "threadId": f"inbox:{mallory}"}

    # and cannot answer bob's item either (the thread refuses: not theirs)
    refused = await inbox_http.post(
        f"/interrupts/{bobs['items'][0]['id']}",
        json={
            "threadId": bobs["threadId"],
            "status": "resolved",
            "payload": {"decision": "approve"},
        },
        headers={"X-Principal": mallory},
    )
    assert refused.status_code in (403, 404), refused.text
    assert len(waiting(await inbox(inbox_http, people.bob))) == 2  # nothing changed


async def test_an_inbox_that_never_was_is_an_empty_list(inbox_http: httpx.AsyncClient) -> None:
    nobody = f"nobody-{uuid.uuid4().hex[:6]}"
    assert await inbox(inbox_http, nobody) == {
        "items": [],
        "names": {},
        "threadId": f"inbox:{nobody}",
    }
