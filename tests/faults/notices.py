"""Where the fault harness's notices arrive: a real SMTP server (aiosmtpd) and a webhook
receiver that verifies every Standard Webhooks signature, both in the harness's own process,
which the chaos never kills.

Each keeps every delivery as it came (a retried notice arrives again under the same
`Message-ID` or `webhook-id`), and indexes the decision links it carried by what they decide
(principal, interrupt, decision): the approvers click them (tests/faults/approvers.py). The
stack is pointed at both (`env`), with its own directory of people (`write_directory`): the
demo's, and every flow's requester and owner, so that each notice goes by email as well.
"""

from __future__ import annotations

import asyncio
import email
import email.policy
import re
import secrets
from base64 import b64encode
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import yaml
from aiosmtpd.controller import Controller
from fastapi import FastAPI, Request, Response
from standardwebhooks import Webhook, WebhookVerificationError

from ag_ui_temporal.notify import links
from tests.conftest import free_port, serve_app

DEMO_DIRECTORY = Path(__file__).resolve().parents[2] / "ag_ui_temporal" / "demo" / "directory.yaml"
LINK_LINE = re.compile(r"(Approve|Reject): (\S+)")
"""A decision link's line in an email's plain text (`notify.render`)."""
LinkKey = tuple[str, str, str]
"""(principal, interrupt id, decision) of a decision link."""


@dataclass(frozen=True)
class Secrets:
    """The stack's signing secrets for this run: the links' and the webhook's."""

    links: str = field(default_factory=lambda: secrets.token_urlsafe(48))
    webhook: str = field(
        default_factory=lambda: "whsec_" + b64encode(secrets.token_bytes(24)).decode()
    )


@dataclass
class Mail:
    """One message the SMTP server accepted."""

    message: EmailMessage
    at: datetime

    @property
    def id(self) -> str:
        return str(self.message["Message-ID"])

    @property
    def text(self) -> str:
        part = self.message.get_body(preferencelist=("plain",))
        return "" if part is None else str(part.get_content())

    @property
    def html(self) -> str:
        part = self.message.get_body(preferencelist=("html",))
        return "" if part is None else str(part.get_content())


@dataclass
class Hook:
    """One verified webhook delivery."""

    id: str
    body: dict[str, Any]
    at: datetime


@dataclass
class Mailbox:
    """aiosmtpd's handler (on the server's thread): keeps every message, and its links."""

    secret: str
    mails: list[Mail] = field(default_factory=list)
    links: dict[LinkKey, str] = field(default_factory=dict)
    """The first link seen for each (principal, interrupt, decision)."""

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        mail = Mail(parsed, datetime.now(UTC))
        self.mails.append(mail)
        # What a person reads: "Approve: <url>" and "Reject: <url>" lines in the plain text
        # (its lines end in CRLF, as they came over SMTP).
        for line in mail.text.splitlines():
            if (said := LINK_LINE.fullmatch(line)) is None:
                continue
            verb, url = said.groups()
            claim = claim_of(self.secret, url, mail.at)
            if claim is not None and claim.decision == verb.lower():
                self.links.setdefault((claim.principal, claim.interrupt_id, claim.decision), url)
        return "250 OK"


@dataclass
class Receiver:
    """The webhook receiver: verifies each delivery's signature over its raw body, keeps the
    verified ones (and their links), and refuses (counts) the rest."""

    secret: str
    link_secret: str
    hooks: list[Hook] = field(default_factory=list)
    links: dict[LinkKey, str] = field(default_factory=dict)
    forged: int = 0

    def app(self) -> FastAPI:
        app = FastAPI()
        verifier = Webhook(self.secret)

        @app.post("/hook")
        async def hook(request: Request) -> Response:
            body = await request.body()
            try:
                payload = verifier.verify(body, dict(request.headers))
            except WebhookVerificationError:
                self.forged += 1
                return Response(status_code=400)
            delivery = Hook(request.headers["webhook-id"], payload, datetime.now(UTC))
            self.hooks.append(delivery)
            data = payload.get("data") or {}
            for decision in links.DECISIONS:
                url = (data.get("links") or {}).get(decision)
                claim = None if url is None else claim_of(self.link_secret, url, delivery.at)
                if url is not None and claim is not None and claim.decision == decision:
                    self.links.setdefault((claim.principal, claim.interrupt_id, decision), url)
            return Response(status_code=204)

        return app


def claim_of(secret: str, url: str, at: datetime) -> links.DecisionClaim | None:
    """What a decision link says, as the gateway reads it when it is used at `at` (None: not
    a link the stack signed)."""
    try:
        return links.read(secret, url.rsplit("/", 1)[-1], now=at)
    except ValueError:  # LinkInvalid, LinkExpired
        return None


@dataclass
class NoticeServers:
    """The SMTP server and the webhook receiver of one harness run, and what they got."""

    secrets: Secrets
    mailbox: Mailbox
    receiver: Receiver
    smtp_port: int
    webhook_url: str

    def links(self, channel: str) -> dict[LinkKey, str]:
        """The decision links a channel (`email`, `webhook`) brought so far."""
        return self.mailbox.links if channel == "email" else self.receiver.links

    def env(self, directory: Path) -> dict[str, str]:
        """What the stack's processes need to tell people and sign links (`PUBLIC_URL` is the
        gateway's own address, `processes.build_stack` knows it)."""
        return {
            "SMTP_URL": f"smtp://127.0.0.1:{self.smtp_port}",
            "NOTIFY_WEBHOOK_URL": self.webhook_url,
            "NOTIFY_WEBHOOK_SECRET": self.secrets.webhook,
            "DECISION_LINK_SECRET": self.secrets.links,
            "DIRECTORY_FILE": str(directory),
        }


@asynccontextmanager
async def notice_servers() -> AsyncIterator[NoticeServers]:
    """Both servers up on loopback until the block ends."""
    keys = Secrets()
    mailbox = Mailbox(keys.links)
    receiver = Receiver(keys.webhook, keys.links)
    smtp = Controller(mailbox, hostname="127.0.0.1", port=free_port())
    await asyncio.to_thread(smtp.start)
    try:
        async with serve_app(receiver.app()) as url:
            yield NoticeServers(keys, mailbox, receiver, smtp.port, f"{url}/hook")
    finally:
        await asyncio.to_thread(smtp.stop)


def write_directory(path: Path, principals: Iterable[str]) -> dict[str, Any]:
    """The demo's people (bob, carol, dave, erin, ...) and each of `principals` with an
    address, so that everyone a notice is for gets it by email too; written to `path`."""
    people: dict[str, Any] = yaml.safe_load(DEMO_DIRECTORY.read_text())
    for principal in principals:
        people.setdefault(principal, {"email": f"{principal}@example.com"})
    path.write_text(yaml.safe_dump(people))
    return people
