"""Approval chains under time skipping, answered over real HTTP.

Days pass in seconds: the time-skipping server jumps its clock on `env.sleep`.
Approvers answer in their inbox threads (`inbox:{principal}`) through the real
gateway, identified by `X-Principal` (dev auth).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client, WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.chains.definitions import ChainDefinition, ChainInput, ChainStep
from ag_ui_temporal.workflows.chains.workflow import ApprovalChain
from ag_ui_temporal.workflows.contract import (
    CONFIRM_SETTLED_ACTIVITY,
    INTERRUPT_SETTLED_SIGNAL,
    InterruptSettled,
    InterruptStatus,
    InterruptView,
    thread_workflow_id,
)
from ag_ui_temporal.workflows.contract.chains import (
    APPROVAL_METADATA_KEY,
    CHAIN_QUERY,
    ChainView,
    inbox_thread,
)
from tests.agui import STREAMS, error, finished, interrupts, resolve, run, thread_state
from tests.conftest import (
    SKIPPING,
    TimeSkippingWedged,
    serve_stack,
    skip_when_quiet,
    skipping_server,
)
from tests.node_clients import requires_node, run_node, streams_of


@pytest.fixture(scope="module")
def chain_settings(data_dir: Path) -> Settings:
    return Settings(
        data_dir=data_dir / "chains",
        task_queue="chains",
        **SKIPPING,
        approvals_admins=["auditor"],  # these chains are not indexed: only an admin finds them
    )


@pytest.fixture(scope="module")
async def chain_http(
    skipping_env: WorkflowEnvironment, chain_settings: Settings, executor: ThreadPoolExecutor
) -> AsyncIterator[httpx.AsyncClient]:
    async with serve_stack(skipping_env.client, chain_settings, executor) as http:
        yield http


class Chains:
    """Start chains and answer them as their approvers would."""

    def __init__(self, env: WorkflowEnvironment, http: httpx.AsyncClient, queue: str) -> None:
        self.env, self.http, self.queue = env, http, queue
        self.tag = uuid.uuid4().hex[:6]  # fresh principals per test: fresh inbox threads

    def who(self, name: str) -> str:
        return f"{name}-{self.tag}"

    async def start(self, definition: ChainDefinition, **fields: Any) -> WorkflowHandle:
        chain_id = f"chain-{uuid.uuid4().hex[:10]}"
        chain = ChainInput(
            chain_id=chain_id,
            definition=definition,
            thread_task_queue=self.queue,
            index=False,
            **fields,
        )
        return await self.env.client.start_workflow(
            ApprovalChain.run, chain, id=chain_id, task_queue=self.queue
        )

    async def state(self, handle: WorkflowHandle) -> ChainView:
        return await handle.query(CHAIN_QUERY, result_type=ChainView)

    async def item(
        self,
        handle: WorkflowHandle,
        principal: str,
        *,
        sender: str | None = None,
        groups: str | None = None,
    ) -> dict[str, Any]:
        """The chain's interrupt in `principal`'s inbox as a hydrate shows it: delivered by
        the thread's own run as it arrived, no client run needed (as `sender` of `groups`
        for a `group:G` inbox). Only an item that waits behind another open one is still
        offered: a run that brings nothing delivers it then."""
        thread = inbox_thread(principal)
        headers = {"X-Principal": sender or principal}
        if groups is not None:
            headers["X-Principal-Groups"] = groups
        for _ in range(400):
            shown = (
                await self.http.get("/agents/inbox", params={"threadId": thread}, headers=headers)
            ).json()
            pending = (shown["interrupts"] or {}).get("pending", [])
            mine = [i for i in pending if _chain_of_wire(i) == handle.id]
            if mine:
                return mine[-1]
            if await self._behind_another(thread, handle):
                delivered = interrupts(
                    await run(
                        self.http, thread, agent="inbox", principal=sender or principal,
                        groups=groups,
                    )
                )  # fmt: skip
                return next(i for i in delivered if _chain_of_wire(i) == handle.id)
            await asyncio.sleep(0.05)
        raise AssertionError(f"nothing of {handle.id} reached {thread}")

    async def _behind_another(self, thread: str, handle: WorkflowHandle) -> bool:
        """The chain's item is offered while another interrupt of the inbox is open."""
        try:
            state = await thread_state(self.env.client, thread)
        except Exception:  # the inbox thread does not exist yet
            return False
        offered = [
            r for r in state.interrupts
            if _chain_of(r) == handle.id and r.status == InterruptStatus.OFFERED
        ]  # fmt: skip
        return bool(offered and state.awaiting)

    async def answer(
        self,
        handle: WorkflowHandle,
        principal: str,
        decision: str,
        *,
        sender: str | None = None,
        groups: str | None = None,
        **extra: Any,
    ) -> list[dict[str, Any]]:
        delivering = sender if groups else None  # a group's inbox is run by a member
        item = await self.item(handle, principal, sender=delivering, groups=groups)
        return await run(
            self.http,
            inbox_thread(principal),
            agent="inbox",
            principal=sender or principal,
            groups=groups,
            resume=[resolve(item, {"decision": decision, **extra})],
        )

    async def skip(self, duration: timedelta, *workflows: WorkflowHandle) -> None:
        await skip_when_quiet(self.env, duration, *workflows)

    async def until(self, handle: WorkflowHandle, check: Any) -> ChainView:
        """The chain's state once `check` holds (a liveness bound, not a speed claim:
        generous, since a loaded 2-core machine replays hundreds of reminders slowly)."""
        async with asyncio.timeout(120):
            while not check(state := await self.state(handle)):
                await asyncio.sleep(0.05)
        return state


def _chain_of(record: InterruptView) -> str | None:
    return _chain_of_wire(record.interrupt)


def _chain_of_wire(interrupt: dict[str, Any]) -> str | None:
    metadata = interrupt.get("metadata") or {}
    return (metadata.get(APPROVAL_METADATA_KEY) or {}).get("chainId")


@pytest.fixture
def chains(skipping_env: WorkflowEnvironment, chain_http: httpx.AsyncClient) -> Chains:
    return Chains(skipping_env, chain_http, "chains")


WEDGE_ATTEMPTS = 3
"""How often a test that skips days runs, each time on a new server, while the time-skipping
server strands its tasks (`TimeSkippingWedged`, sdk-java#3088): a fault of the test server
only (the real server retries such a task), seen in about one full run in four."""


def on_fresh_servers(
    body: Callable[[Chains], Awaitable[None]],
) -> Callable[[Settings, ThreadPoolExecutor], Awaitable[None]]:
    """Run a test that skips days on a time-skipping server and stack of its own, and again on
    new ones when the server wedged (up to `WEDGE_ATTEMPTS`). Any other failure fails it."""

    async def test(chain_settings: Settings, executor: ThreadPoolExecutor) -> None:
        for attempt in range(1, WEDGE_ATTEMPTS + 1):
            async with (
                skipping_server() as env,
                serve_stack(env.client, chain_settings, executor) as http,
            ):
                try:
                    await body(Chains(env, http, chain_settings.task_queue))
                    return
                except TimeSkippingWedged as wedged:
                    if attempt == WEDGE_ATTEMPTS:
                        raise
                    logging.warning("time-skipping server wedged, attempt %d: %s", attempt, wedged)

    test.__name__ = test.__qualname__ = body.__name__
    test.__doc__ = body.__doc__
    return test


def decisions(state: ChainView) -> list[tuple[str | None, str | None, str | None]]:
    return [(e.step, e.principal, e.decision) for e in state.audit if e.kind == "decision"]


def at(text: str | None) -> datetime:
    assert text is not None
    return datetime.fromisoformat(text)


# -- chains under time skipping --------------------------------------------------------------


@on_fresh_servers
async def test_three_day_chain_with_escalation_reminders_and_quorum(chains: Chains) -> None:
    bob, dana, frank = chains.who("bob"), chains.who("dana"), chains.who("frank")
    finance = [chains.who(n) for n in ("carol", "dave", "erin")]
    definition = ChainDefinition(
        name="purchase",
        groups={"finance": finance},
        steps=[
            ChainStep(
                name="manager", approvers=[bob], expires_in=timedelta(days=1),
                remind_every=timedelta(hours=8), on_expiry="escalate", escalate_to=dana,
            ),
            ChainStep(
                name="finance", approvers=["finance"], quorum=2, expires_in=timedelta(days=2),
                remind_every=timedelta(hours=12),
            ),
            ChainStep(name="board", approvers=[frank], when="amount > 1000"),
            ChainStep(name="skipped", approvers=[frank], when="amount > 1000000"),
        ],
    )  # fmt: skip
    handle = await chains.start(definition, request={"amount": 5000}, title="purchase 5000")
    state = await chains.until(handle, lambda s: s.steps and s.steps[0].slots)
    assert [s.name for s in state.steps] == ["manager", "finance", "board"]
    started = at(state.steps[0].started_at)

    bobs = await chains.item(handle, bob)  # bob sees it, and lets it expire
    bob_thread = chains.env.client.get_workflow_handle(thread_workflow_id(inbox_thread(bob)))
    await chains.skip(timedelta(days=1, minutes=1), handle, bob_thread)
    state = await chains.until(handle, lambda s: s.steps[0].escalated_to == dana)
    reminders = [(at(r.at) - started, r.principals) for r in state.reminders]
    assert reminders[:2] == [(timedelta(hours=8), [bob]), (timedelta(hours=16), [bob])]
    bob_inbox = await thread_state(chains.env.client, inbox_thread(bob))
    assert sum("Reminder:" in str(m.get("content")) for m in bob_inbox.messages) == 2
    late = error(
        await run(
            chains.http, inbox_thread(bob), agent="inbox", principal=bob,
            resume=[resolve(bobs, {"decision": "approve"})],
        )
    )  # fmt: skip
    assert late["code"] in ("INTERRUPT_EXPIRED", "INTERRUPT_WITHDRAWN")  # whichever came first

    await chains.answer(handle, dana, "approve", comment="covering for bob")
    state = await chains.until(handle, lambda s: s.current == 1)
    inboxes = [
        chains.env.client.get_workflow_handle(thread_workflow_id(inbox_thread(who)))
        for who in (bob, dana, *finance)
    ]
    await chains.skip(timedelta(days=1), handle, *inboxes)
    await chains.answer(handle, finance[0], "approve")
    await chains.answer(handle, finance[1], "approve")
    await chains.until(handle, lambda s: s.current == 2)
    await chains.skip(timedelta(hours=12), handle, *inboxes)
    await chains.answer(handle, frank, "approve")
    result: ChainView = await handle.result()

    assert result.status == "approved"
    assert [s.status for s in result.steps] == ["approved", "approved", "approved"]
    assert at(result.audit[-1].at) - started >= timedelta(days=2, hours=12)
    assert decisions(result) == [
        ("manager", dana, "approve"),
        ("finance", finance[0], "approve"),
        ("finance", finance[1], "approve"),
        ("board", frank, "approve"),
    ]
    kinds = [e.kind for e in result.audit]
    assert kinds.index("expired") < kinds.index("escalated") < kinds.index("decision")
    dana_decision = next(e for e in result.audit if e.kind == "decision")
    assert dana_decision.payload == {"decision": "approve", "comment": "covering for bob"}
    assert dana_decision.run_id is not None
    # erin's seat was not needed: her interrupt left her inbox
    erin_inbox = await thread_state(chains.env.client, inbox_thread(finance[2]))
    assert [r.status for r in erin_inbox.interrupts] == [InterruptStatus.WITHDRAWN]
    # The audit trail stays readable after completion, as the gateway reads it: from the
    # store the chain wrote it to while it ran. (Not a query: that replays the chain, and the
    # time-skipping server once stamped a replayed workflow task 256 ms after the one the
    # chain had run in, moving an entry's `at`.)
    shown = await chains.http.get(f"/approvals/{handle.id}", headers={"X-Principal": "auditor"})
    assert ChainView.model_validate(shown.json()).audit == result.audit


async def test_only_the_assignee_or_its_delegate_may_answer(chains: Chains):
    bob, carol, mallory = chains.who("bob"), chains.who("carol"), chains.who("mallory")
    definition = ChainDefinition(
        name="d", steps=[ChainStep(name="manager", approvers=[bob])], delegates=[carol]
    )
    handle = await chains.start(definition, requester=chains.who("alice"))
    item = await chains.item(handle, bob)
    before = await thread_state(chains.env.client, inbox_thread(bob))
    for sender in (mallory, None):
        refused = error(
            await run(
                chains.http, inbox_thread(bob), agent="inbox", principal=sender,
                resume=[resolve(item, {"decision": "approve"})],
            )
        )  # fmt: skip
        assert refused["code"] == "UNKNOWN_INTERRUPT_ID"  # another's inbox: as if none
        [problem] = refused["metadata"]["tanstack"]["interruptErrors"]
        assert problem["interruptId"] == item["id"]
    assert await thread_state(chains.env.client, inbox_thread(bob)) == before

    await chains.answer(handle, bob, "delegate", delegateTo=carol, comment="on leave")
    # the delegate answers in her own inbox; bob can no longer decide
    refused = error(await chains.answer(handle, carol, "approve", sender=bob))
    assert refused["code"] == "UNKNOWN_INTERRUPT_ID"
    await chains.answer(handle, carol, "reject", comment="no budget")
    result: ChainView = await handle.result()
    assert result.status == "rejected"
    delegated = next(e for e in result.audit if e.kind == "delegated")
    assert (delegated.principal, delegated.note) == (bob, carol)
    assert decisions(result) == [("manager", carol, "reject")]
    [slot_bob, slot_carol] = result.steps[0].slots
    assert (slot_bob.status, slot_carol.delegated_from) == ("closed", bob)


async def test_two_quorum_approvers_at_the_same_moment_each_count_once(chains: Chains):
    finance = [chains.who(n) for n in ("carol", "dave", "erin")]
    definition = ChainDefinition(
        name="q", steps=[ChainStep(name="finance", approvers=finance, quorum=2)]
    )
    handle = await chains.start(definition)
    items = [await chains.item(handle, p) for p in finance[:2]]
    answers = await asyncio.gather(
        *(
            run(
                chains.http, inbox_thread(p), agent="inbox", principal=p,
                resume=[resolve(item, {"decision": "approve"})],
            )
            for p, item in zip(finance[:2], items, strict=True)
        )
    )  # fmt: skip
    assert all(finished(a)["outcome"] == {"type": "success"} for a in answers)
    result: ChainView = await handle.result()
    assert result.status == "approved"
    assert sorted(decisions(result)) == sorted(("finance", p, "approve") for p in finance[:2])
    assert [s.status for s in result.steps[0].slots] == ["approved", "approved", "closed"]


@on_fresh_servers
async def test_hundreds_of_reminders_continue_as_new_without_losing_a_decision(
    chains: Chains,
) -> None:
    bob, carol = chains.who("bob"), chains.who("carol")
    definition = ChainDefinition(
        name="long",
        steps=[
            ChainStep(
                name="both", approvers=[bob, carol], expires_in=timedelta(days=30),
                remind_every=timedelta(hours=1),
            )
        ],
    )  # fmt: skip
    handle = await chains.start(definition, history_limit=400)
    started = at(
        (await chains.until(handle, lambda s: s.steps and s.steps[0].slots)).steps[0].started_at
    )
    await chains.answer(handle, bob, "approve")
    await chains.until(handle, lambda s: decisions(s))
    inboxes = [
        chains.env.client.get_workflow_handle(thread_workflow_id(inbox_thread(who)))
        for who in (bob, carol)
    ]
    await chains.skip(timedelta(days=6, minutes=30), handle, *inboxes)
    state = await chains.until(handle, lambda s: len(s.reminders) >= 144)
    assert state.runs > 3  # continued as new several times
    await chains.answer(handle, carol, "approve")
    # Wait on queries first: awaiting the result lets the server skip time, and days of
    # hourly reminders could pile up before the thread's signal with carol's answer lands.
    await chains.until(handle, lambda s: len(decisions(s)) == 2)
    result: ChainView = await handle.result()
    assert result.status == "approved"
    assert decisions(result) == [("both", bob, "approve"), ("both", carol, "approve")]
    assert len(result.reminders) >= 144
    assert [at(r.at) - started for r in result.reminders[:144]] == [
        timedelta(hours=h) for h in range(1, 145)
    ]
    assert all(r.principals == [carol] for r in result.reminders)


# -- the expense flow, end to end over HTTP with TanStack's ChatClient ------------------------


async def tanstack(
    url: str, thread: str, principal: str, steps: list[Any], **job: Any
) -> list[Any]:
    result = await run_node(
        "tanstack_chat.mjs",
        {
            "url": url,
            "threadId": thread,
            "headers": {"X-Principal": principal},
            "steps": steps,
            **job,
        },
    )
    STREAMS.extend(streams_of(result["snapshots"]))
    return result["snapshots"]


async def pending(http: httpx.AsyncClient, principal: str, chain: str) -> dict[str, Any]:
    """The chain's item in `principal`'s approvals inbox (visibility lags a little)."""
    for _ in range(200):
        page = (
            await http.get(
                "/approvals", params={"assignee": principal}, headers={"X-Principal": principal}
            )
        ).json()
        mine = [item for item in page["items"] if item["chain"] == chain]
        if mine:
            return mine[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"{chain} never listed for {principal}")


async def approve_in_inbox(url: str, principal: str) -> None:
    """Approve as a stock `ChatClient` with `persistence: true` does on page load: hydrate
    the inbox (once the chain's offer reached it), then resolve what it shows."""
    async with httpx.AsyncClient(base_url=url) as http:
        await hydrated(http, inbox_thread(principal), principal)
    asked, done = await tanstack(
        f"{url}/agents/inbox",
        inbox_thread(principal),
        principal,
        [{"attach": True}, {"resolve": [{"index": 0, "payload": APPROVE}]}],
        persistence=True,
    )
    # The page load shows what waits: the hydrate alone, no run was sent to fetch it.
    assert [r["method"] for r in asked["requests"]] == ["GET"]
    [item] = asked["interrupts"]
    assert (item["kind"], item["canResolve"], item["reason"]) == (
        "generic", True, "temporal:approval",
    )  # fmt: skip
    assert done["stepError"] is None and done["error"] is None and done["interrupts"] == []


async def hydrated(http: httpx.AsyncClient, thread: str, principal: str) -> list[Any]:
    """The interrupts a hydrate of `thread` shows, once it shows any."""
    for _ in range(200):
        shown = await http.get(
            "/agents/inbox", params={"threadId": thread}, headers={"X-Principal": principal}
        )
        if pending := (shown.json()["interrupts"] or {}).get("pending"):
            return list(pending)
        await asyncio.sleep(0.05)
    raise AssertionError(f"nothing reached {thread}")


APPROVE = {"decision": "approve"}
AS_ALICE = {"X-Principal": "alice"}
AS_MALLORY = {"X-Principal": "mallory"}


@requires_node
async def test_expense_flow_end_to_end(
    gateway_url: str, http: httpx.AsyncClient, client: Client, thread_id: str
):
    alice = f"alice-{thread_id}"
    asked, submitted = await tanstack(
        f"{gateway_url}/agents/assistant",
        thread_id,
        alice,
        [
            {"send": "Reimburse 2400 EUR for the Berlin offsite"},
            {"resolve": [{"index": 0, "payload": {"approved": True}}]},
        ],
    )
    [tool] = asked["interrupts"]
    assert (tool["reason"], tool["canResolve"]) == ("tool_call", True)  # generic: unregistered
    assert submitted["stepError"] is None and submitted["interrupts"] == []
    said = await thread_state(client, thread_id)
    chain_id = next(
        m["content"].split(" as ")[1].split(".")[0]
        for m in said.messages
        if "Submitted the expense" in str(m.get("content"))
    )
    handle = client.get_workflow_handle(chain_id, result_type=ChainView)
    state = await handle.query(CHAIN_QUERY, result_type=ChainView)
    assert state.requester == alice
    assert state.request == {"amount": 2400, "currency": "EUR", "description": "the Berlin offsite"}
    assert [s.name for s in state.steps] == ["manager", "finance"]

    item = await pending(http, "bob", chain_id)
    assert (item["step"], item["requester"], item["thread"]) == ("manager", alice, "inbox:bob")
    assert item["expiresAt"] is not None
    await approve_in_inbox(gateway_url, "bob")
    await pending(http, "carol", chain_id)
    await approve_in_inbox(gateway_url, "carol")
    # her answer reaches the chain by a signal of her inbox thread's: dave answers once it has
    # (each settlement travels on its own, and the chain records them as they land)
    async with asyncio.timeout(60):
        while ("finance", "carol", "approve") not in decisions(
            await handle.query(CHAIN_QUERY, result_type=ChainView)
        ):
            await asyncio.sleep(0.05)
    await approve_in_inbox(gateway_url, "dave")
    result = await handle.result()
    assert result.status == "approved"
    assert decisions(result) == [
        ("manager", "bob", "approve"),
        ("finance", "carol", "approve"),
        ("finance", "dave", "approve"),
    ]

    shown = (await http.get(f"/approvals/{chain_id}", headers={"X-Principal": alice})).json()
    assert [e["principal"] for e in shown["audit"] if e["kind"] == "decision"] == [
        "bob", "carol", "dave",
    ]  # fmt: skip
    assert (await http.get("/approvals/expense-nope", headers=AS_ALICE)).status_code == 404
    # alice's thread has the outcome: at hydration, and streamed on her next run
    hydrated = (
        await http.get(
            "/agents/assistant", params={"threadId": thread_id}, headers={"X-Principal": alice}
        )
    ).json()
    outcome = "Your request expense 2400 EUR for the Berlin offsite was approved."
    assert any(outcome in str(m) for m in hydrated["messages"])
    [news] = await tanstack(
        f"{gateway_url}/agents/assistant", thread_id, alice, [{"send": "news?"}]
    )
    assert news["stepError"] is None
    assert any(
        e.get("delta") == outcome for e in news["events"] if e["type"] == "TEXT_MESSAGE_CONTENT"
    )
    for _ in range(200):  # visibility lags a little
        done = (
            await http.get(
                "/approvals",
                params={"assignee": "dave", "status": "done"},
                headers={"X-Principal": "dave"},
            )
        ).json()
        if any(i["chain"] == chain_id for i in done["items"]):
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("not listed as done for dave")
    listed = await asyncio.to_thread(
        cli_output, ["approvals", "--url", gateway_url, "show", chain_id, "--as", alice]
    )
    assert listed["status"] == "approved"
    # Lists are the assignee's own; a chain is shown to its participants only (404 to others).
    assert (await http.get("/approvals", params={"assignee": "bob"})).status_code == 403
    assert (await http.get(f"/approvals/{chain_id}", headers=AS_MALLORY)).status_code == 404


def cli_output(argv: list[str]) -> Any:
    import contextlib
    import io
    import json

    from ag_ui_temporal.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        main(argv)
    return json.loads(out.getvalue())


async def test_cli_lists_and_approves(
    gateway_url: str, http: httpx.AsyncClient, client: Client, settings: Settings
):
    bob = f"bob-{uuid.uuid4().hex[:6]}"
    definition = ChainDefinition(name="cli", steps=[ChainStep(name="only", approvers=[bob])])
    chain_id = f"chain-{uuid.uuid4().hex[:10]}"
    handle = await client.start_workflow(
        ApprovalChain.run,
        ChainInput(chain_id=chain_id, definition=definition, thread_task_queue=settings.task_queue),
        id=chain_id,
        task_queue=settings.task_queue,
    )
    await pending(http, bob, chain_id)
    url = ["approvals", "--url", gateway_url]
    listed = await asyncio.to_thread(cli_output, [*url, "list", "--as", bob])
    assert [item["chain"] for item in listed["items"]] == [chain_id]
    end = await asyncio.to_thread(
        cli_output, [*url, "approve", chain_id, "--as", bob, "--comment", "ok"]
    )
    assert end["type"] == "RUN_FINISHED"
    result = ChainView.model_validate(await handle.result())
    assert result.status == "approved"
    [decision] = [e for e in result.audit if e.kind == "decision"]
    assert (decision.principal, decision.payload) == (bob, {"decision": "approve", "comment": "ok"})
    assert decision.via == "cli"  # the audit trail says where it came from


# -- chain rules ------------------------------------------------------------------------------


async def confirmations(handle: WorkflowHandle) -> int:
    """How many settlement claims the chain has checked with a thread so far."""
    scheduled: set[int] = set()
    done = 0
    async for event in handle.fetch_history_events():
        if event.HasField("activity_task_scheduled_event_attributes"):
            attributes = event.activity_task_scheduled_event_attributes
            if attributes.activity_type.name == CONFIRM_SETTLED_ACTIVITY:
                scheduled.add(event.event_id)
        if event.HasField("activity_task_completed_event_attributes"):
            done += event.activity_task_completed_event_attributes.scheduled_event_id in scheduled
    return done


async def test_a_settlement_the_thread_did_not_record_does_not_count(chains: Chains):
    alice, bob, mallory = chains.who("alice"), chains.who("bob"), chains.who("mallory")
    definition = ChainDefinition(name="f", steps=[ChainStep(name="manager", approvers=[bob])])
    handle = await chains.start(definition, requester=alice)
    item = await chains.item(handle, bob)
    forged = InterruptSettled(
        interrupt_id=item["id"],
        thread_id=inbox_thread(bob),
        status="resolved",
        payload={"decision": "approve"},
        principal=bob,
    )
    # what `temporal workflow signal` can send: as bob, and as mallory naming her own thread
    await handle.signal(INTERRUPT_SETTLED_SIGNAL, forged)
    other = {"principal": mallory, "thread_id": inbox_thread(mallory)}
    await handle.signal(INTERRUPT_SETTLED_SIGNAL, forged.model_copy(update=other))
    async with asyncio.timeout(60):
        while await confirmations(handle) < 2:
            await asyncio.sleep(0.05)
    state = await chains.state(handle)
    assert state.status == "running" and decisions(state) == []
    assert [s.status for s in state.steps[0].slots] == ["waiting"]

    await chains.answer(handle, bob, "approve", comment="genuine")
    result: ChainView = await handle.result()
    assert result.status == "approved"
    assert decisions(result) == [("manager", bob, "approve")]
    [decision] = [e for e in result.audit if e.kind == "decision"]
    assert decision.payload == {"decision": "approve", "comment": "genuine"}  # the thread's


async def test_the_requester_holds_no_seat_and_the_chain_still_decides(chains: Chains):
    alice, carol, dana = chains.who("alice"), chains.who("carol"), chains.who("dana")
    definition = ChainDefinition(
        name="self",
        steps=[
            ChainStep(name="peers", approvers=[alice, carol], quorum=2),
            ChainStep(
                name="manager", approvers=[alice], expires_in=timedelta(days=1),
                on_expiry="escalate", escalate_to=dana,
            ),
        ],
    )  # fmt: skip
    handle = await chains.start(definition, requester=alice)
    state = await chains.until(handle, lambda s: s.steps and s.steps[0].slots)
    assert [(s.approvers, s.quorum) for s in state.steps] == [([carol], 1), ([], 1)]
    await chains.answer(handle, carol, "approve")
    # nobody but alice was named: the step escalates at once, to dana
    await chains.answer(handle, dana, "approve")
    result: ChainView = await handle.result()
    assert result.status == "approved"
    assert decisions(result) == [("peers", carol, "approve"), ("manager", dana, "approve")]
    assert alice not in {slot.assignee for step in result.steps for slot in step.slots}

    # a definition may allow it explicitly
    allowed = await chains.start(
        definition.model_copy(update={"allow_self_approval": True}), requester=alice
    )
    state = await chains.until(allowed, lambda s: s.steps and len(s.steps[0].slots) == 2)
    assert (state.steps[0].approvers, state.steps[0].quorum) == ([alice, carol], 2)
    await allowed.terminate("done checking")


async def test_one_person_counts_once_in_a_quorum(chains: Chains):
    alice, carol, dave = chains.who("alice"), chains.who("carol"), chains.who("dave")
    fin, ops = chains.who("fin"), chains.who("ops")
    definition = ChainDefinition(
        name="distinct",
        steps=[
            ChainStep(
                name="finance", approvers=[carol, dave, f"group:{fin}", f"group:{ops}"], quorum=2
            )
        ],
    )
    handle = await chains.start(definition, requester=alice)
    # dave cannot hand his seat to carol, who holds one already
    refused = error(await chains.answer(handle, dave, "delegate", delegateTo=carol))
    assert refused["code"] == "INVALID_PAYLOAD"
    await chains.answer(handle, carol, "approve")
    # carol again through a group seat, and alice (the requester) through the other one
    await chains.answer(handle, f"group:{fin}", "approve", sender=carol, groups=fin)
    await chains.answer(handle, f"group:{ops}", "approve", sender=alice, groups=ops)
    state = await chains.until(handle, lambda s: sum(e.kind == "refused" for e in s.audit) == 2)
    assert state.status == "running" and state.steps[0].status == "active"
    await chains.answer(handle, dave, "approve")
    result: ChainView = await handle.result()
    assert result.status == "approved"
    assert decisions(result) == [("finance", carol, "approve"), ("finance", dave, "approve")]
    refusals = [(e.principal, e.note) for e in result.audit if e.kind == "refused"]
    assert refusals == [
        (carol, f"{carol} already counted in this step"),
        (alice, "the requester cannot decide their own request"),
    ]


async def test_delegates_must_be_known_bounded_and_not_the_requester(chains: Chains):
    alice, bob, carol = chains.who("alice"), chains.who("bob"), chains.who("carol")
    dana, mallory = chains.who("dana"), chains.who("mallory")
    definition = ChainDefinition(
        name="d",
        steps=[
            ChainStep(
                name="manager", approvers=[bob], expires_in=timedelta(days=1),
                on_expiry="escalate", escalate_to=dana,
            )
        ],
        delegates=[carol, alice],
    )  # fmt: skip
    handle = await chains.start(definition, requester=alice)
    item = await chains.item(handle, bob)
    allowed = item["responseSchema"]["properties"]["delegateTo"]
    assert (allowed["enum"], allowed["maxLength"]) == ([dana, carol], 200)
    before = await thread_state(chains.env.client, inbox_thread(bob))
    for target in ("x" * 1500, mallory, alice, bob, ""):
        refused = error(await chains.answer(handle, bob, "delegate", delegateTo=target))
        assert refused["code"] == "INVALID_PAYLOAD", target[:20]
    assert await thread_state(chains.env.client, inbox_thread(bob)) == before
    assert [s.status for s in (await chains.state(handle)).steps[0].slots] == ["waiting"]
    await chains.answer(handle, bob, "delegate", delegateTo=carol)
    await chains.answer(handle, carol, "approve")
    result: ChainView = await handle.result()
    assert result.status == "approved"
    assert decisions(result) == [("manager", carol, "approve")]


async def test_an_answer_for_a_closed_seat_is_told_so(chains: Chains):
    """Never a silent success: an answer either counts (it is in the audit trail) or its run
    fails with INTERRUPT_WITHDRAWN, also when it races the quorum or the chain is gone."""
    carol, dave, erin = chains.who("carol"), chains.who("dave"), chains.who("erin")
    definition = ChainDefinition(
        name="race", steps=[ChainStep(name="finance", approvers=[carol, dave], quorum=1)]
    )
    for _ in range(3):  # both answer at the same moment: one quorum, two answers
        handle = await chains.start(definition)
        items = [await chains.item(handle, p) for p in (carol, dave)]
        answers = await asyncio.gather(
            *(
                run(
                    chains.http, inbox_thread(p), agent="inbox", principal=p,
                    resume=[resolve(item, {"decision": "approve"})],
                )
                for p, item in zip((carol, dave), items, strict=True)
            )
        )  # fmt: skip
        result: ChainView = await handle.result()
        assert result.status == "approved"
        counted = {principal for _, principal, _ in decisions(result)}
        for principal, events in zip((carol, dave), answers, strict=True):
            if principal in counted:
                assert finished(events)["outcome"] == {"type": "success"}
            else:
                assert error(events)["code"] == "INTERRUPT_WITHDRAWN"

    # after the quorum: the closed seat's answer is refused
    handle = await chains.start(definition)
    late = await chains.item(handle, dave)
    await chains.answer(handle, carol, "approve")
    await handle.result()
    refused = error(
        await run(
            chains.http, inbox_thread(dave), agent="inbox", principal=dave,
            resume=[resolve(late, {"decision": "reject"})],
        )
    )  # fmt: skip
    assert refused["code"] == "INTERRUPT_WITHDRAWN"

    # the chain is gone (terminated): nobody would count the answer
    handle = await chains.start(
        ChainDefinition(name="gone", steps=[ChainStep(name="only", approvers=[erin])])
    )
    item = await chains.item(handle, erin)
    await handle.terminate("withdrawn by an admin")
    refused = error(await chains.answer(handle, erin, "approve"))
    assert refused["code"] == "INTERRUPT_WITHDRAWN"
    erin_inbox = await thread_state(chains.env.client, inbox_thread(erin))
    assert [r.status for r in erin_inbox.interrupts] == [InterruptStatus.WITHDRAWN]
    assert item["id"] == erin_inbox.interrupts[0].id
