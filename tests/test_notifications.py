"""Approvals that reach people, end to end: an expense chain under time skipping tells its
approvers by email (a real SMTP server on loopback, aiosmtpd) and by a webhook (a real HTTP
receiver that verifies every Standard Webhooks signature), and they decide from there.

Bob approves from the link in his email (a GET shows a page and decides nothing; the POST
decides once, a second use and a forged link change nothing); the finance members are told,
then reminded; carol delegates to dana through the decision API and dana is told; dave
approves by link; alice hears the outcome. A second chain's manager lets it expire: the
escalation tells dana. The webhook receiver is down from the start and comes up at the end:
nothing waited for it, and it then gets every notice once.
"""

from __future__ import annotations

import asyncio
import email
import email.policy
import re
import secrets
import uuid
from base64 import b64encode
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from aiosmtpd.controller import Controller
from fastapi import FastAPI, Request, Response
from pydantic import SecretStr
from standardwebhooks import Webhook
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from ag_ui_temporal.notify import links
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.store import NotificationLog, open_engine
from ag_ui_temporal.workflows.chains.definitions import ChainDefinition, ChainInput, ChainStep
from ag_ui_temporal.workflows.chains.workflow import ApprovalChain
from ag_ui_temporal.workflows.contract import thread_workflow_id
from ag_ui_temporal.workflows.contract.chains import CHAIN_QUERY, ChainView, inbox_thread
from tests.conftest import SKIPPING, free_port, serve_app, serve_stack
from tests.test_approvals import Chains

PUBLIC_URL = "https://approvals.example.com"
PEOPLE = ("alice", "bob", "carol", "dave", "erin", "dana")


@dataclass
class Mailbox:
    """What the SMTP server received, as parsed messages."""

    messages: list[EmailMessage] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        self.messages.append(parsed)
        return "250 OK"

    def to(self, who: str) -> list[EmailMessage]:
        return [m for m in self.messages if f"{who}@example.com" in str(m["To"])]

    async def next_to(self, who: str, seen: int, words: str) -> EmailMessage:
        """The first message to `who` after the `seen` ones before it, whose text has `words`."""
        async with asyncio.timeout(60):
            while True:
                for message in self.to(who)[seen:]:
                    if words.lower() in text_of(message).lower():
                        return message
                await asyncio.sleep(0.05)


def text_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())


def link(message: EmailMessage, decision: str) -> str:
    """The path of the message's `decision` link, on the gateway these tests serve."""
    urls = re.findall(rf"{re.escape(PUBLIC_URL)}/decisions/[\w.\-]+", text_of(message))
    found = [u for u in urls if decision_of(u) == decision]
    assert len(found) == 1, (decision, urls)
    return urlsplit(found[0]).path


def decision_of(url: str) -> str:
    return links.read(SECRET, url.rsplit("/", 1)[1], now=datetime.now(UTC)).decision


SECRET = "s" * 40
WEBHOOK_SECRET = "whsec_" + b64encode(secrets.token_bytes(24)).decode()


@dataclass
class Receiver:
    """A webhook receiver that checks each delivery's signature and counts it by id."""

    port: int
    deliveries: Counter[str] = field(default_factory=Counter)
    bodies: dict[str, Any] = field(default_factory=dict)
    forged: int = 0

    def app(self) -> FastAPI:
        app = FastAPI()
        verifier = Webhook(WEBHOOK_SECRET)

        @app.post("/hook")
        async def hook(request: Request) -> Response:
            body = await request.body()
            try:
                payload = verifier.verify(body, dict(request.headers))
            except Exception:
                self.forged += 1
                return Response(status_code=400)
            key = request.headers["webhook-id"]
            self.deliveries[key] += 1
            self.bodies[key] = payload
            return Response(status_code=204)

        return app


@pytest.fixture(scope="module")
def mailbox() -> Iterator[tuple[Mailbox, int]]:
    box = Mailbox()
    controller = Controller(box, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield box, controller.port
    finally:
        controller.stop()


@pytest.fixture(scope="module")
def directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("people") / "people.yaml"
    lines = []
    for who in PEOPLE:
        lines += [f"{who}:", f"  name: {who.title()} Example", f"  email: {who}@example.com"]
    path.write_text("\n".join(lines) + "\n")
    return path


def notify_settings(
    data_dir: Path, queue: str, smtp_port: int, directory: Path, receiver: Receiver
) -> Settings:
    return Settings(
        data_dir=data_dir / queue,
        task_queue=queue,
        **SKIPPING,
        public_url=PUBLIC_URL,
        directory_file=directory,
        smtp_url=SecretStr(f"smtp://127.0.0.1:{smtp_port}"),
        notify_webhook_url=f"http://127.0.0.1:{receiver.port}/hook",
        notify_webhook_secret=SecretStr(WEBHOOK_SECRET),
        decision_link_secret=SecretStr(SECRET),
        notify_max_retry_interval=timedelta(seconds=1),
        approvals_admins=["auditor"],  # these chains are not indexed: only an admin finds them
    )


@pytest.fixture(scope="module")
def receiver() -> Receiver:
    return Receiver(port=free_port())


@pytest.fixture(scope="module")
async def notifying(
    skipping_env: WorkflowEnvironment,
    data_dir: Path,
    mailbox: tuple[Mailbox, int],
    directory: Path,
    receiver: Receiver,
    executor: ThreadPoolExecutor,
) -> AsyncIterator[httpx.AsyncClient]:
    settings = notify_settings(data_dir, "notices", mailbox[1], directory, receiver)
    async with (
        serve_receiver(receiver),
        serve_stack(skipping_env.client, settings, executor) as http,
    ):
        yield http


def expense() -> ChainDefinition:
    return ChainDefinition(
        name="expense",
        groups={"finance": ["carol", "dave", "erin"]},
        steps=[
            ChainStep(
                name="manager", approvers=["bob"], expires_in=timedelta(days=1),
                on_expiry="escalate", escalate_to="dana",
            ),
            ChainStep(
                name="finance", approvers=["finance"], quorum=2, expires_in=timedelta(days=2),
                remind_every=timedelta(hours=12),
            ),
        ],
    )  # fmt: skip


async def test_the_expense_chain_reaches_its_approvers_and_they_decide_from_there(
    skipping_env: WorkflowEnvironment,
    notifying: httpx.AsyncClient,
    mailbox: tuple[Mailbox, int],
    receiver: Receiver,
):
    http = notifying
    box = mailbox[0]
    chains = Chains(skipping_env, http, "notices")
    seen = {who: len(box.to(who)) for who in PEOPLE}
    handle = await chains.start(
        expense(), request={"amount": 2400}, title="Expense 2400 EUR for the offsite",
        requester="alice",
    )  # fmt: skip

    # Bob is told by email, with a link per decision.
    told = await box.next_to("bob", seen["bob"], "Expense 2400 EUR")
    assert "Bob Example" in str(told["To"]) and "inbox:bob" not in text_of(told)
    approve = link(told, "approve")

    # A GET (a mail scanner, a link preview) shows a page and decides nothing.
    page = await http.get(approve)
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    state = await chains.state(handle)
    assert state.current == 0 and [s.status for s in state.steps[0].slots] == ["waiting"]

    # The POST decides, once; the audit says it came by link.
    decided = await http.post(approve)
    assert decided.status_code == 200, decided.text
    state = await chains.until(handle, lambda s: s.current == 1)
    [bobs] = [e for e in state.audit if e.kind == "decision"]
    assert (bobs.principal, bobs.decision, bobs.via) == ("bob", "approve", "link")
    again = await http.post(approve)
    assert again.status_code == 409 and "text/html" in again.headers["content-type"]
    forged = await http.post(approve[:-2] + ("AA" if not approve.endswith("AA") else "BB"))
    assert forged.status_code == 403
    answers = [e for e in (await chains.state(handle)).audit if e.kind == "decision"]
    assert answers == [bobs]  # neither changed anything

    # The finance members are told, then reminded.
    finance = ("carol", "dave", "erin")
    asks = {who: await box.next_to(who, seen[who], "Expense 2400 EUR") for who in finance}
    counted = {who: len(box.to(who)) for who in finance}
    await chains.skip(timedelta(hours=12, minutes=1), handle)
    for who in finance:
        await box.next_to(who, counted[who], "reminder")

    # Carol delegates to dana through the decision API; dana is told.
    carol_item = await chains.item(handle, "carol")
    delegated = await http.post(
        f"/interrupts/{carol_item['id']}",
        json={"status": "resolved", "payload": {"decision": "delegate", "delegateTo": "dana"}},
        headers={"X-Principal": "carol"},
    )
    assert delegated.status_code == 200, delegated.text
    await box.next_to("dana", seen["dana"], "Carol")
    # Dave approves from his email's link; dana through the API: the quorum of two is met.
    assert (await http.post(link(asks["dave"], "approve"))).status_code == 200
    dana_item = await chains.item(handle, "dana")
    answered = await http.post(
        f"/interrupts/{dana_item['id']}",
        json={"status": "resolved", "payload": {"decision": "approve"}},
        headers={"X-Principal": "dana"},
    )
    assert answered.status_code == 200, answered.text
    result: ChainView = await handle.result()
    assert result.status == "approved"
    vias = {
        (e.principal, e.decision): e.via
        for e in result.audit
        if e.kind in ("decision", "delegated")
    }
    assert vias == {
        ("bob", "approve"): "link", ("carol", "delegate"): "api", ("dave", "approve"): "link",
        ("dana", "approve"): "api",
    }  # fmt: skip
    outcome = await box.next_to("alice", seen["alice"], "approved")
    assert "Expense 2400 EUR" in str(outcome["Subject"]) + text_of(outcome)

    # The chain's view shows what each channel did; the receiver verified every delivery and
    # got each notice once, as the mail server did.
    view = (await http.get(f"/approvals/{handle.id}", headers={"X-Principal": "auditor"})).json()
    sent = {(n["principal"], n["kind"], n["channel"]) for n in view["notifications"]}
    assert {("bob", "waiting", "email"), ("bob", "waiting", "webhook")} <= sent
    assert {("alice", "outcome", "email"), ("dana", "delegated", "webhook")} <= sent
    assert all(n["status"] == "sent" for n in view["notifications"])
    async with asyncio.timeout(60):
        while ("alice", "outcome") not in webhooks(receiver):
            await asyncio.sleep(0.05)
    assert receiver.forged == 0
    assert all(count == 1 for count in receiver.deliveries.values()), receiver.deliveries
    outcome_body = next(b for b in receiver.bodies.values() if b["type"] == "chain.outcome")
    assert outcome_body["data"]["chain"]["id"] == handle.id


def webhooks(receiver: Receiver) -> set[tuple[str, str]]:
    """(principal, type) of every verified webhook delivery."""
    return {
        (body["data"]["principal"], body["type"].rsplit(".", 1)[1])
        for body in receiver.bodies.values()
    }


async def test_an_escalation_tells_its_target_and_the_expired_link_changes_nothing(
    skipping_env: WorkflowEnvironment,
    notifying: httpx.AsyncClient,
    mailbox: tuple[Mailbox, int],
):
    http = notifying
    box = mailbox[0]
    chains = Chains(skipping_env, http, "notices")
    seen = {who: len(box.to(who)) for who in PEOPLE}
    handle = await chains.start(
        expense(), request={"amount": 10}, title="Expense 10 EUR for a taxi",
        requester="alice",
    )  # fmt: skip
    told = await box.next_to("bob", seen["bob"], "Expense 10 EUR")
    approve = link(told, "approve")
    thread = skipping_env.client.get_workflow_handle(thread_workflow_id(inbox_thread("bob")))
    await chains.skip(timedelta(days=1, minutes=1), handle, thread)
    await chains.until(handle, lambda s: s.steps[0].escalated_to == "dana")
    await box.next_to("dana", seen["dana"], "Expense 10 EUR")

    before = (await chains.state(handle)).audit
    late = await http.post(approve)
    assert 400 <= late.status_code < 500 and "text/html" in late.headers["content-type"]
    assert (await chains.state(handle)).audit == before


@asynccontextmanager
async def serve_receiver(receiver: Receiver) -> AsyncIterator[None]:
    """The receiver, up on its port until the block ends (down before and after)."""
    async with serve_app(receiver.app(), port=receiver.port):
        yield


async def test_a_webhook_receiver_that_is_down_delays_nothing_and_gets_every_notice_once(
    client: Client,
    data_dir: Path,
    mailbox: tuple[Mailbox, int],
    directory: Path,
    executor: ThreadPoolExecutor,
):
    """On the dev server, in real time: the receiver is down while a chain is decided, then
    comes back and gets each notice once (the email channel is not sent again)."""
    box, smtp_port = mailbox
    down = Receiver(port=free_port())
    settings = notify_settings(data_dir, "notices-live", smtp_port, directory, down)
    seen = {who: len(box.to(who)) for who in PEOPLE}
    definition = ChainDefinition(name="taxi", steps=[ChainStep(name="manager", approvers=["bob"])])
    async with serve_stack(client, settings, executor) as http:
        handle = await client.start_workflow(
            ApprovalChain.run,
            ChainInput(
                chain_id=f"chain-{uuid.uuid4().hex[:10]}", definition=definition,
                title="Expense 30 EUR for a taxi", requester="alice",
                thread_task_queue="notices-live", index=False,
            ),
            id=f"chain-{uuid.uuid4().hex[:10]}",
            task_queue="notices-live",
        )  # fmt: skip
        told = await box.next_to("bob", seen["bob"], "Expense 30 EUR")
        assert (await http.post(link(told, "approve"))).status_code == 200
        assert (await handle.result()).status == "approved"  # nothing waited for the webhook
        await box.next_to("alice", seen["alice"], "approved")

        log = NotificationLog(open_engine(settings.store_url))
        chain_id = (await handle.query(CHAIN_QUERY, result_type=ChainView)).chain_id
        failing = [d for d in await log.for_chain(chain_id) if d.channel == "webhook"]
        assert failing and all(d.status == "failed" and d.error for d in failing)
        emailed = {d.key: d.attempts for d in await log.for_chain(chain_id) if d.channel == "email"}

        async with serve_receiver(down):
            async with asyncio.timeout(60):
                while webhooks(down) != {("bob", "waiting"), ("alice", "outcome")}:
                    await asyncio.sleep(0.05)
        assert down.forged == 0 and all(n == 1 for n in down.deliveries.values())
        delivered = {d.key: d for d in await log.for_chain(chain_id)}
        assert all(d.status == "sent" for d in delivered.values())
        # the mail server took each notice at its first attempt and was not asked again
        assert emailed == {k: 1 for k in emailed} and len(box.to("bob")) == seen["bob"] + 1
