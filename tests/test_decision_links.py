"""Signed decision links: a chain's seat decided from a link, under time skipping, over HTTP.

The gateway runs with `DECISION_LINK_SECRET`; links are minted as a notification would mint
them (`notify.links.mint`) for the seat's interrupt in the approver's inbox. A link's page
changes nothing; its button decides once; every other link (forged, expired, used, for
someone else's seat, for a seat that closed) gets a plain page and changes nothing.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from pydantic import BaseModel, SecretStr
from temporalio import workflow
from temporalio.client import WorkflowHandle
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from ag_ui_temporal.gateway.decision_ids import RunIdKey, decision_run_id
from ag_ui_temporal.gateway.limits import LinkLimits
from ag_ui_temporal.gateway.routes.links import DONE
from ag_ui_temporal.notify.links import (
    LINK_LIFETIME,
    Decision,
    LinkExpired,
    LinkInvalid,
    decision_url,
    mint,
    one_click_payload,
    read,
)
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.store import ServerSecrets, open_engine
from ag_ui_temporal.workflows.chains.definitions import ChainDefinition, ChainStep
from ag_ui_temporal.workflows.contract import (
    RUN_UPDATE,
    InterruptStatus,
    ResumeItem,
    RunRequest,
    RunResult,
    approval_response_schema,
    run_digest,
    run_update_id,
    thread_workflow_id,
)
from ag_ui_temporal.workflows.contract.chains import (
    APPROVAL_REASON,
    ChainView,
    decision_schema,
    inbox_thread,
)
from ag_ui_temporal.workflows.contract.resume import answer_digest
from ag_ui_temporal.workflows.producers import ask_in_thread
from tests.agui import finished, resolve, run, thread_state
from tests.conftest import SKIPPING, serve_gateway, serve_stack
from tests.gateway.test_principal_limits import Clock
from tests.test_approvals import Chains, decisions
from tests.test_approvals_access import CountingInterceptor, counting_client
from tests.test_producers import delivered, owned, until

SECRET = "link-secret-" + "x" * 32
OTHER_SECRET = "another-secret-" + "y" * 32
TEAM, BOB, DAVE = "team-links", "bob-links", "dave-links"
"""A team whose thread both see; the directory puts Bob in it (a link names no groups)."""
PAGE_HEADERS = {
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; "
    "form-action 'self'; frame-ancestors 'none'",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    "x-robots-tag": "noindex",
}


# -- the links themselves ---------------------------------------------------------------------


def test_one_click_payloads_are_what_the_interrupts_schema_takes():
    seat = decision_schema([])
    assert one_click_payload(APPROVAL_REASON, seat, "approve") == {"decision": "approve"}
    assert one_click_payload(APPROVAL_REASON, decision_schema(["dana"]), "reject") == {
        "decision": "reject"
    }
    # a seat whose form asks for more than the decision: the inbox, not a link
    asks_more = {**seat, "required": ["decision", "comment"]}
    assert one_click_payload(APPROVAL_REASON, asks_more, "approve") is None
    tool = approval_response_schema({"type": "object"})
    assert one_click_payload("tool_call", tool, "approve") == {"approved": True}
    assert one_click_payload("tool_call", tool, "reject") == {"approved": False}
    with_payload = approval_response_schema({"type": "object"}, {"type": "object"})
    assert one_click_payload("tool_call", with_payload, "approve") is None
    assert one_click_payload("confirmation", {"type": "boolean"}, "approve") is True
    assert one_click_payload("confirmation", None, "reject") is False
    assert one_click_payload("confirmation", {"type": "string"}, "approve") is None
    assert one_click_payload("input_required", None, "approve") is None
    assert one_click_payload("acme:review", {"type": "boolean"}, "approve") is None


def test_a_link_says_who_decides_what_until_when():
    now = datetime(2030, 1, 1, tzinfo=UTC)
    claims = {"thread_id": "inbox:bob", "interrupt_id": "int-1", "principal": "bob"}
    token = mint(SECRET, **claims, decision="reject", expires_at=None, now=now)
    claim = read(SECRET, token, now)
    assert (claim.thread_id, claim.interrupt_id, claim.principal, claim.decision) == (
        "inbox:bob", "int-1", "bob", "reject",
    )  # fmt: skip
    assert claim.expires_at == now + LINK_LIFETIME
    assert mint(SECRET, **claims, decision="reject", expires_at=None, now=now) != token  # jti
    deadline = now + timedelta(hours=5)
    bounded = mint(SECRET, **claims, decision="approve", expires_at=deadline, now=now)
    assert read(SECRET, bounded, now).expires_at == deadline
    with pytest.raises(LinkExpired):
        read(SECRET, bounded, deadline)
    with pytest.raises(LinkInvalid):
        read(OTHER_SECRET, bounded, now)
    for garbled in ("", "a.b.c", "x" * 5000, edited(bounded, dec="delegate"), bounded[:-2]):
        with pytest.raises(LinkInvalid):
            read(SECRET, garbled, now)
    # a sign-in token signed with the same secret is no link (no audience)
    sign_in = jwt.encode({"sub": "bob", "exp": 2_000_000_000}, SECRET, algorithm="HS256")
    with pytest.raises(LinkInvalid):
        read(SECRET, sign_in, now)
    with pytest.raises(ValueError):
        mint(SECRET, **claims, decision="delegate", expires_at=None, now=now)  # type: ignore[arg-type]
    assert decision_url("https://approvals.example.com", token).endswith(f"/decisions/{token}")


def edited(token: str, **claims: Any) -> str:
    """`token` with claims changed and its signature kept (what a forger can do)."""
    header, body, signature = token.split(".")
    decoded = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    changed = json.dumps({**decoded, **claims}, separators=(",", ":")).encode()
    return ".".join([header, base64.urlsafe_b64encode(changed).decode().rstrip("="), signature])


# -- links against a chain, under time skipping --------------------------------------------


@pytest.fixture(scope="module")
def link_settings(data_dir: Path) -> Settings:
    directory = data_dir / "links-directory.json"
    directory.write_text(json.dumps({BOB: {"groups": [TEAM]}, DAVE: {"groups": [TEAM]}}))
    return Settings(
        data_dir=data_dir / "links",
        task_queue="links",
        **SKIPPING,
        decision_link_secret=SecretStr(SECRET),
        directory_file=directory,
    )


@pytest.fixture(scope="module")
async def link_http(
    skipping_env: WorkflowEnvironment, link_settings: Settings, executor: ThreadPoolExecutor
) -> AsyncIterator[httpx.AsyncClient]:
    async with serve_stack(skipping_env.client, link_settings, executor) as http:
        yield http


@pytest.fixture
def chains(skipping_env: WorkflowEnvironment, link_http: httpx.AsyncClient) -> Chains:
    return Chains(skipping_env, link_http, "links")


def link(
    item: dict[str, Any],
    principal: str,
    decision: Decision,
    *,
    seat_of: str | None = None,
    secret: str = SECRET,
    expires_at: datetime | None = None,
) -> str:
    """The path of a link to the seat `item` in `seat_of`'s inbox (default: `principal`'s)."""
    token = mint(
        secret,
        thread_id=inbox_thread(seat_of or principal),
        interrupt_id=item["id"],
        principal=principal,
        decision=decision,
        expires_at=expires_at,
        now=datetime.now(UTC),
    )
    return f"/decisions/{token}"


def page(response: httpx.Response, status: int) -> str:
    """The page's text, checked to be a plain HTML page with the link headers."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert {name: response.headers.get(name) for name in PAGE_HEADERS} == PAGE_HEADERS
    assert "<script" not in response.text
    return response.text


async def unchanged(chains: Chains, handle: WorkflowHandle, principal: str) -> Any:
    """What a link that changed nothing leaves: the chain and the seat's inbox as they were."""
    return (
        await chains.state(handle),
        await thread_state(chains.env.client, inbox_thread(principal)),
    )


async def test_a_link_shows_the_request_then_decides_once(chains: Chains):
    alice, bob = chains.who("alice"), chains.who("bob")
    definition = ChainDefinition(name="dinner", steps=[ChainStep(name="manager", approvers=[bob])])
    handle = await chains.start(
        definition, requester=alice, title="Team dinner 120 EUR <b>&</b>", request={"amount": 120}
    )
    item = await chains.item(handle, bob)
    approve = link(item, bob, "approve")
    before = await unchanged(chains, handle, bob)

    shown = page(await chains.http.get(approve), 200)
    assert "Approve this request?" in shown and '<form method="post">' in shown
    assert "Team dinner 120 EUR &lt;b&gt;&amp;&lt;/b&gt;" in shown  # escaped
    assert all(word in shown for word in ("manager", alice, bob, ">Approve</button>"))
    assert item["id"] not in shown and "inbox:" not in shown  # no internal ids
    assert await unchanged(chains, handle, bob) == before  # a page view decides nothing

    assert "Approved. Thank you." in page(await chains.http.post(approve), 200)
    result: ChainView = await handle.result()
    assert result.status == "approved"
    assert decisions(result) == [("manager", bob, "approve")]
    [decided] = [e for e in result.audit if e.kind == "decision"]
    assert (decided.payload, decided.via) == ({"decision": "approve"}, "link")

    after = await unchanged(chains, handle, bob)
    assert "already used" in page(await chains.http.post(approve), 409)
    assert "already answered" in page(await chains.http.get(approve), 409)
    reject = link(item, bob, "reject")  # another link to the answered seat
    assert "already answered" in page(await chains.http.post(reject), 409)
    assert await unchanged(chains, handle, bob) == after


async def test_forged_and_expired_links_change_nothing(chains: Chains):
    bob = chains.who("bob")
    definition = ChainDefinition(name="f", steps=[ChainStep(name="manager", approvers=[bob])])
    handle = await chains.start(definition, requester=chains.who("alice"))
    item = await chains.item(handle, bob)
    before = await unchanged(chains, handle, bob)
    genuine = link(item, bob, "reject").removeprefix("/decisions/")
    forged = [
        link(item, bob, "approve", secret=OTHER_SECRET),
        f"/decisions/{edited(genuine, dec='approve')}",
        f"/decisions/{edited(genuine, sub=chains.who('mallory'))}",
        "/decisions/not-a-token",
        f"/decisions/{'x' * 5000}",
    ]
    for path in forged:
        for method in ("GET", "POST"):
            assert "not valid" in page(await chains.http.request(method, path), 403)
    expired = link(item, bob, "approve", expires_at=datetime.now(UTC) - timedelta(minutes=1))
    for method in ("GET", "POST"):
        assert "expired" in page(await chains.http.request(method, expired), 410)
    assert await unchanged(chains, handle, bob) == before
    assert [s.status for s in (await chains.state(handle)).steps[0].slots] == ["waiting"]
    await handle.terminate("done checking")


async def test_a_link_to_another_principals_seat_is_refused(chains: Chains):
    bob, carol = chains.who("bob"), chains.who("carol")
    definition = ChainDefinition(
        name="two", steps=[ChainStep(name="managers", approvers=[bob, carol], quorum=2)]
    )
    handle = await chains.start(definition, requester=chains.who("alice"))
    bobs = await chains.item(handle, bob)
    await chains.item(handle, carol)
    before = await unchanged(chains, handle, bob)
    wrong = link(bobs, carol, "reject", seat_of=bob)  # carol's link to bob's seat
    for method in ("GET", "POST"):
        assert "does not let you" in page(await chains.http.request(method, wrong), 403)
    assert await unchanged(chains, handle, bob) == before
    state = await chains.state(handle)
    assert state.status == "running" and decisions(state) == []
    await handle.terminate("done checking")


async def test_a_link_to_a_closed_seat_changes_nothing(chains: Chains):
    """The step was decided by another approver: dave's seat was withdrawn."""
    carol, dave = chains.who("carol"), chains.who("dave")
    definition = ChainDefinition(
        name="either", steps=[ChainStep(name="finance", approvers=[carol, dave], quorum=1)]
    )
    handle = await chains.start(definition, requester=chains.who("alice"))
    daves = await chains.item(handle, dave)
    approve = link(daves, dave, "approve")
    await chains.answer(handle, carol, "approve")
    result: ChainView = await handle.result()
    withdrawn = await thread_state(chains.env.client, inbox_thread(dave))
    assert [r.status for r in withdrawn.interrupts] == [InterruptStatus.WITHDRAWN]
    for method in ("GET", "POST"):
        assert "no longer waiting" in page(await chains.http.request(method, approve), 410)
    assert await thread_state(chains.env.client, inbox_thread(dave)) == withdrawn
    assert (await chains.state(handle)).audit == result.audit
    assert decisions(result) == [("finance", carol, "approve")]


async def test_a_decision_by_api_is_audited_as_such(chains: Chains):
    """The decision API on a chain's seat: the audit says it came by the API."""
    bob = chains.who("bob")
    definition = ChainDefinition(name="api", steps=[ChainStep(name="manager", approvers=[bob])])
    handle = await chains.start(definition, requester=chains.who("alice"))
    item = await chains.item(handle, bob)
    response = await chains.http.post(
        f"/interrupts/{item['id']}",
        json={"status": "resolved", "payload": {"decision": "reject", "comment": "no"}},
        headers={"X-Principal": bob},
    )
    assert response.status_code == 200, response.text
    assert response.json()["threadId"] == inbox_thread(bob)
    result: ChainView = await handle.result()
    assert result.status == "rejected"
    [decided] = [e for e in result.audit if e.kind == "decision"]
    assert (decided.principal, decided.decision, decided.via) == (bob, "reject", "api")


# -- a co-owner who is not the approver ----------------------------------------------------


class ConfirmInput(BaseModel):
    thread_id: str
    team: str
    approver: str
    thread_task_queue: str


@workflow.defn(name="TeamConfirm")
class TeamConfirm:
    """A confirmation in a thread the whole team sees, which only `approver` may answer."""

    @workflow.run
    async def run(self, ask: ConfirmInput) -> dict[str, Any]:
        outcome = await ask_in_thread(
            ask.thread_id,
            reason="confirmation",
            message="Wire the money?",
            response_schema={"type": "boolean"},
            allowed_resolvers=[ask.approver],
            thread_task_queue=ask.thread_task_queue,
            thread_owner=f"group:{ask.team}",
        )
        return {
            "status": outcome.status,
            "payload": outcome.payload,
            "principal": outcome.principal,
            "via": outcome.via,
        }


@asynccontextmanager
async def team_confirms(
    env: WorkflowEnvironment, settings: Settings
) -> AsyncIterator[Callable[[str], Awaitable[WorkflowHandle[Any, Any]]]]:
    """`ask(thread_id)` starts a `TeamConfirm` asking Bob in the team's thread `thread_id`, on a
    worker of its own, until the block ends."""
    queue = f"team-{uuid.uuid4().hex[:6]}"

    async def ask(thread_id: str) -> WorkflowHandle[Any, Any]:
        confirm = ConfirmInput(
            thread_id=thread_id, team=TEAM, approver=BOB, thread_task_queue=settings.task_queue
        )
        return await env.client.start_workflow(
            TeamConfirm.run, confirm, id=f"confirm-{thread_id}", task_queue=queue
        )

    async with Worker(
        env.client, task_queue=queue, workflows=[TeamConfirm],
        workflow_runner=UnsandboxedWorkflowRunner(),
    ):  # fmt: skip
        yield ask


def public_run_id(principal: str, thread_id: str, interrupt_id: str, payload: Any) -> str:
    """The id a decision's run had before it was keyed: a digest of what the thread shows."""
    key = json.dumps([principal, thread_id, interrupt_id, answer_digest("resolved", payload)])
    return f"decision-{hashlib.sha256(key.encode()).hexdigest()[:24]}"


async def test_a_co_owner_cannot_swallow_the_approvers_link(
    chains: Chains, link_http: httpx.AsyncClient, link_settings: Settings
):
    """Dave sees the team's thread but may not answer; he sends an empty run under the id
    Bob's link decides with. Bob's link still decides (the thread has his answer, the audit
    says so), or says it did not and stays usable: never a "Thank you" for nothing."""
    env = chains.env
    async with team_confirms(env, link_settings) as ask:
        answers: list[tuple[Decision, bool]] = [("approve", True), ("reject", False)]
        for decision, payload in answers:
            thread_id = f"wire-{uuid.uuid4().hex[:8]}"
            handle = await ask(thread_id)
            state = await until(env.client, thread_id, lambda s: bool(s.interrupts))
            [asked] = state.interrupts
            as_dave = {"X-Principal": DAVE, "X-Principal-Groups": TEAM}
            claimed = public_run_id(BOB, thread_id, asked.id, payload)
            body = {"threadId": thread_id, "runId": claimed, "messages": []}
            await link_http.post("/agents/inbox", json=body, headers=as_dave)

            path = link_to(thread_id, asked.id, BOB, decision)
            response = await link_http.post(path)
            state = await thread_state(env.client, thread_id)
            [record] = state.interrupts
            if response.status_code == 200:
                assert f"{DONE[decision]}. Thank you." in page(response, 200)
                assert record.status == InterruptStatus.RESOLVED
                assert (record.resolved_by, record.resolved_via) == (BOB, "link")
                assert record.resolution is not None and record.resolution.payload is payload
                heard = {"status": "resolved", "payload": payload, "principal": BOB, "via": "link"}
                assert await handle.result() == heard
                answered = await audited(link_http, thread_id, "answered")
                assert (answered["principal"], answered["data"]["via"]) == (BOB, "link")
                key = await deployment_key(link_settings)  # as another replica derives it
                mine = decision_run_id(key, BOB, thread_id, asked.id, "resolved", payload)
                assert answered["runId"] == record.resolved_by_run == mine != claimed
            else:  # refused: nothing applied, and the link is not spent
                assert record.status == InterruptStatus.OPEN and record.resolution is None
                again = await link_http.post(path)
                assert "already used" not in again.text
                await handle.terminate("done checking")


async def deployment_key(settings: Settings) -> bytes:
    """The key decision run ids are derived with, as another gateway replica reads it."""
    engine = open_engine(settings.store_url)
    try:
        return await RunIdKey(ServerSecrets(engine)).get()
    finally:
        await engine.dispose()


def link_to(thread_id: str, interrupt_id: str, principal: str, decision: Decision) -> str:
    token = mint(
        SECRET,
        thread_id=thread_id,
        interrupt_id=interrupt_id,
        principal=principal,
        decision=decision,
        expires_at=None,
        now=datetime.now(UTC),
    )
    return f"/decisions/{token}"


async def audited(http: httpx.AsyncClient, thread_id: str, kind: str) -> dict[str, Any]:
    """The thread's first audit record of `kind`, once the thread wrote it to the store."""
    headers = {"X-Principal": BOB, "X-Principal-Groups": TEAM}
    for _ in range(600):
        response = await http.get("/audit", params={"threadId": thread_id}, headers=headers)
        assert response.status_code == 200, response.text
        found = [r for r in response.json()["records"] if r["kind"] == kind]
        if found:
            return found[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no {kind!r} record in the audit of {thread_id}")


async def test_a_producer_hears_who_decided_and_how(
    chains: Chains, link_http: httpx.AsyncClient, link_settings: Settings
):
    """Bob answers a producer's confirmation in the chat, by a decision link and by the
    decision API: each time the producer hears Bob, and the way he came, as the thread's
    audit trail records them. (The CLI decides approval chains' seats only:
    tests/test_approvals.py::test_cli_lists_and_approves.)"""
    env = chains.env
    as_bob = {"X-Principal": BOB, "X-Principal-Groups": TEAM}

    async def in_chat(thread_id: str, interrupt_id: str) -> None:
        shown = await link_http.get("/agents/inbox", params={"threadId": thread_id}, headers=as_bob)
        [item] = shown.json()["interrupts"]["pending"]
        resume = [resolve(item, True)]
        done = await run(link_http, thread_id, agent="inbox", principal=BOB, groups=TEAM,
                         resume=resume)  # fmt: skip
        assert finished(done)["outcome"] == {"type": "success"}

    async def by_link(thread_id: str, interrupt_id: str) -> None:
        response = await link_http.post(link_to(thread_id, interrupt_id, BOB, "approve"))
        assert "Approved. Thank you." in page(response, 200)

    async def by_api(thread_id: str, interrupt_id: str) -> None:
        body = {"threadId": thread_id, "status": "resolved", "payload": True}
        response = await link_http.post(f"/interrupts/{interrupt_id}", json=body, headers=as_bob)
        assert response.status_code == 200, response.text

    async with team_confirms(env, link_settings) as ask:
        for via, answer in (("chat", in_chat), ("link", by_link), ("api", by_api)):
            thread_id = f"who-{via}-{uuid.uuid4().hex[:8]}"
            handle = await ask(thread_id)
            [asked] = owned(await until(env.client, thread_id, delivered(1)))
            await answer(thread_id, asked.id)
            heard = await handle.result()
            assert heard == {"status": "resolved", "payload": True, "principal": BOB, "via": via}
            answered = await audited(link_http, thread_id, "answered")
            assert (answered["principal"], answered["data"]["via"]) == (BOB, via)


async def test_a_link_whose_run_id_was_taken_says_so_and_stays_usable(
    chains: Chains, link_http: httpx.AsyncClient, link_settings: Settings
):
    """A run sent past the gateway (an older gateway, anyone with Temporal's API and the
    deployment's key) under the very id Bob's link decides with, answering nothing: the link
    says nothing was applied, changes nothing, and is not spent."""
    env = chains.env
    async with team_confirms(env, link_settings) as ask:
        thread_id = f"wire-{uuid.uuid4().hex[:8]}"
        handle = await ask(thread_id)
        [asked] = (await until(env.client, thread_id, lambda s: bool(s.interrupts))).interrupts
        key = await deployment_key(link_settings)
        taken = decision_run_id(key, BOB, thread_id, asked.id, "resolved", True)
        empty = RunRequest(
            thread_id=thread_id, run_id=taken, agent="inbox", principal=DAVE, groups=[TEAM]
        )
        # under the very update id Bob's decision is sent as: Temporal answers his with this
        decision = ResumeItem(interrupt_id=asked.id, status="resolved", payload=True)
        brings = run_digest(empty.model_copy(update={"resume": [decision]}))
        await env.client.get_workflow_handle(thread_workflow_id(thread_id)).execute_update(
            RUN_UPDATE, empty, id=run_update_id(taken, brings), result_type=RunResult
        )
        before = await thread_state(env.client, thread_id)
        path = link_to(thread_id, asked.id, BOB, "approve")
        for _ in range(2):  # not spent: the second click is not "already used"
            assert "could not be applied" in page(await link_http.post(path), 409)
        assert await thread_state(env.client, thread_id) == before
        await handle.terminate("done checking")


async def test_racing_clicks_decide_once(chains: Chains):
    """20 clicks on the approve link and 5 on the reject link of one seat, all at once: one
    decision, one "Thank you"; every other click is told it changed nothing (`409`), or, past
    the link's rate limit (`MAX_REQUESTS_PER_LINK`, 10 a minute), to wait (`429`)."""
    bob = chains.who("bob")
    definition = ChainDefinition(name="race", steps=[ChainStep(name="manager", approvers=[bob])])
    handle = await chains.start(definition, requester=chains.who("alice"))
    item = await chains.item(handle, bob)
    approve, reject = link(item, bob, "approve"), link(item, bob, "reject")
    clicks = [approve] * 20 + [reject] * 5
    pages = await asyncio.gather(*(chains.http.post(path) for path in clicks))
    statuses = sorted(p.status_code for p in pages)
    assert statuses[0] == 200 and set(statuses[1:]) <= {409, 429}, [p.text for p in pages]
    assert statuses.count(429) == 20 - 10, statuses  # the approve link's clicks past its 10
    result: ChainView = await handle.result()
    [(_, who, decided)] = decisions(result)
    [done] = [(path, p) for path, p in zip(clicks, pages, strict=True) if p.status_code == 200]
    assert who == bob and (decided, done[0]) in (("approve", approve), ("reject", reject))
    answered = await thread_state(chains.env.client, inbox_thread(bob))
    assert [r.status for r in answered.interrupts] == [InterruptStatus.RESOLVED]


# -- how often a link may be opened ----------------------------------------------------------


async def test_a_link_opened_too_often_is_429_before_any_temporal_call(
    chains: Chains, skipping_env: WorkflowEnvironment, link_settings: Settings
):
    """Past its limit a link (any method) gets a 429 page with `Retry-After` and asks
    Temporal nothing; another link from the same address goes on until the address's
    limit, which refuses every link from it."""
    bob = chains.who("bob")
    definition = ChainDefinition(name="busy", steps=[ChainStep(name="manager", approvers=[bob])])
    handle = await chains.start(definition, requester=chains.who("alice"))
    item = await chains.item(handle, bob)
    counter = CountingInterceptor()
    limits = {"max_requests_per_link": 3, "max_link_requests_per_address": 7}
    limited = link_settings.model_copy(update=limits)
    approve, reject = link(item, bob, "approve"), link(item, bob, "reject")
    before = await unchanged(chains, handle, bob)
    async with (
        serve_gateway(limited, counting_client(skipping_env.client, counter)) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        for _ in range(3):
            assert "Approve this request?" in page(await http.get(approve), 200)
        asked = counter.calls.copy()
        assert asked["describe"] + asked["query"] > 0  # an open link reads the thread
        for method in ("GET", "POST", "GET"):
            busy = await http.request(method, approve)
            assert "opened too often" in page(busy, 429)
            assert 1 <= int(busy.headers["retry-after"]) <= 60
        assert counter.calls == asked  # refused before any Temporal call
        assert "Reject this request?" in page(await http.get(reject), 200)  # the 7th
        assert "opened too often" in page(await http.get(reject), 429)  # the address's 8th
        assert counter.calls["describe"] + counter.calls["query"] > sum(asked.values())
    assert await unchanged(chains, handle, bob) == before  # no POST decided anything
    await handle.terminate("done checking")


def test_link_limits_refill_and_stay_bounded_under_many_tokens_and_addresses():
    clock = Clock()
    limits = LinkLimits(per_link=2, per_address=4, tracked=100, clock=clock)
    assert limits.take("t1", "10.0.0.1") is None and limits.take("t1", "10.0.0.1") is None
    assert limits.take("t1", "10.0.0.2") == pytest.approx(30.0)  # the link's, from anywhere
    assert limits.take("t2", "10.0.0.1") is None and limits.take("t3", "10.0.0.1") is None
    assert limits.take("t4", "10.0.0.1") == pytest.approx(15.0)  # the address's 5th
    clock.now += 30
    assert limits.take("t1", "10.0.0.3") is None  # one token back
    for n in range(10_000):  # distinct tokens from distinct addresses
        limits.take(f"token-{n}", f"10.1.{n // 256}.{n % 256}")
    assert len(limits.links.buckets) == len(limits.addresses.buckets) == 100
    assert all(len(key) == 64 for key in limits.links.buckets)  # digests, whatever the token
    clock.now += 60  # a minute idle: every bucket is full again, so none is kept
    limits.take("x" * 5000, "10.0.0.1")
    assert len(limits.links.buckets) == len(limits.addresses.buckets) == 1
