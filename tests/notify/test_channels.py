"""The channels against real servers on loopback: a webhook receiver that verifies every
Standard Webhooks signature, an SMTP server (aiosmtpd, with STARTTLS, implicit TLS and
AUTH), and Apprise posting JSON to the same receiver. Each failure is a `ChannelError` that
says what failed and carries no secret. A tarpit (aiosmtpd answering a byte at a time) and a
mail host whose name lookup hangs hold no thread the rest of the worker needs, and every
connection to them is closed when its send ends."""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import ipaddress
import os
import socket
import ssl
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from fastapi import FastAPI, Request, Response
from pydantic import SecretStr
from standardwebhooks import Webhook, WebhookVerificationError
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from ag_ui_temporal.notify.activities import Notifier
from ag_ui_temporal.notify.channels import (
    ChannelError,
    ChatChannel,
    EmailChannel,
    WebhookChannel,
    channels_from,
    message_id,
)
from ag_ui_temporal.notify.directory import Person
from ag_ui_temporal.notify.render import Links, Message, render
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.store import NotificationLog, open_engine
from ag_ui_temporal.workflows.contract.chains import APPROVAL_REASON
from ag_ui_temporal.workflows.contract.notices import Notice
from tests.conftest import free_port, serve_app

SECRET = "whsec_" + base64.b64encode(os.urandom(24)).decode()
INTERRUPT = "int-5e0c2d"
KEY = f"{INTERRUPT}:bob:waiting"
BOB = Person(principal="bob", name="Bob Baker", email="bob@example.com")
NOTICE = Notice(
    key=KEY,
    kind="waiting",
    principal="bob",
    thread_id="inbox:bob",
    interrupt_id=INTERRUPT,
    reason=APPROVAL_REASON,
    message="Approve expense 90 EUR from alice? (step 'manager' of chain expense-call_9)",
    expires_at="2026-12-04T09:00:00Z",
    chain_id="expense-call_9",
    title="expense 90 EUR for a taxi",
    step="manager",
    requester="alice",
)
LINKS = Links(
    inbox="http://127.0.0.1:8000/?view=inbox",
    approve="http://127.0.0.1:8000/decisions/a-token",
    reject="http://127.0.0.1:8000/decisions/r-token",
)


def message() -> Message:
    return render(NOTICE, BOB, LINKS, {"alice": "Alice Adams"})


# -- a receiver for the webhook and for Apprise's json:// ---------------------------------


@dataclass
class Received:
    hooks: list[tuple[dict[str, str], Any]] = field(default_factory=list)
    """Verified webhook deliveries: their headers and the JSON they carried."""
    forged: list[str] = field(default_factory=list)
    """Why each delivery that failed verification failed."""
    chat: dict[str, list[Any]] = field(default_factory=dict)
    """Apprise's JSON posts, by path."""


def receiver() -> tuple[FastAPI, Received]:
    app, received = FastAPI(), Received()

    @app.post("/hooks")
    async def hooks(request: Request) -> Response:
        body, headers = await request.body(), dict(request.headers)
        try:
            payload = Webhook(SECRET).verify(body, headers)
        except WebhookVerificationError as err:
            received.forged.append(str(err))
            return Response(status_code=401)
        received.hooks.append((headers, payload))
        return Response(status_code=204)

    @app.post("/broken")
    async def broken() -> Response:
        return Response("no", status_code=500)

    @app.post("/chat/{name}")
    async def chat(name: str, request: Request) -> dict[str, bool]:
        received.chat.setdefault(name, []).append(await request.json())
        return {"ok": True}

    return app, received


@pytest.fixture
async def receiving() -> AsyncIterator[tuple[str, Received]]:
    app, received = receiver()
    async with serve_app(app) as url:
        yield url, received


def dead_url(path: str = "/") -> str:
    """A loopback port nothing listens on."""
    return f"http://127.0.0.1:{free_port()}{path}"


# -- webhook ------------------------------------------------------------------------------


async def test_the_webhook_posts_the_body_signed_with_the_key_as_its_id(
    receiving: tuple[str, Received],
):
    url, received = receiving
    channel = WebhookChannel(f"{url}/hooks", SecretStr(SECRET))
    sent = message()
    await channel.send(BOB, sent, key=KEY)
    await channel.send(BOB, sent, key=KEY)  # a retry: the same id, for the receiver to drop
    assert received.forged == []
    assert [headers["webhook-id"] for headers, _ in received.hooks] == [KEY, KEY]
    headers, payload = received.hooks[0]
    assert payload == sent.body
    assert payload["type"] == "interrupt.waiting" and payload["data"]["key"] == KEY
    assert headers["content-type"] == "application/json"
    assert headers["webhook-signature"].startswith("v1,")


async def test_a_webhook_signed_with_another_secret_fails_verification(
    receiving: tuple[str, Received],
):
    url, received = receiving
    other = "whsec_" + base64.b64encode(os.urandom(24)).decode()
    with pytest.raises(ChannelError, match="answered 401"):
        await WebhookChannel(f"{url}/hooks", SecretStr(other)).send(BOB, message(), key=KEY)
    assert received.hooks == [] and received.forged == ["No matching signature found"]


async def test_a_webhook_that_fails_or_is_not_there_is_a_channel_error_without_secrets(
    receiving: tuple[str, Received],
):
    url, _ = receiving
    host = url.removeprefix("http://")
    with pytest.raises(ChannelError) as failed:
        secret_url = f"http://hook-user:hook-pass@{host}/broken?token=query-token"
        await WebhookChannel(secret_url, SecretStr(SECRET)).send(BOB, message(), key=KEY)
    assert str(failed.value) == f"webhook http://{host} answered 500 Internal Server Error"
    dead = dead_url("/hooks")
    with pytest.raises(ChannelError, match=r"unreachable \(ConnectError\)") as failed:
        await WebhookChannel(dead, SecretStr(SECRET)).send(BOB, message(), key=KEY)
    assert SECRET not in str(failed.value)


async def test_the_webhook_reaches_whoever_wants_it():
    channel = WebhookChannel(dead_url(), SecretStr(SECRET))
    assert channel.reaches(Person(principal="zoe"))
    assert not channel.reaches(Person(principal="zoe", channels=["email"]))


# -- email --------------------------------------------------------------------------------


class Mailbox:
    """aiosmtpd's handler: keeps each accepted message; refuses `@refused.example`."""

    def __init__(self) -> None:
        self.mails: list[tuple[Envelope, EmailMessage]] = []

    async def handle_RCPT(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, options: Any
    ) -> str:
        if address.endswith("@refused.example"):
            return "550 5.1.1 no such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        assert isinstance(envelope.content, bytes)
        parsed = message_from_bytes(envelope.content, policy=policy.default)
        assert isinstance(parsed, EmailMessage)
        self.mails.append((envelope, parsed))
        return "250 Message accepted"


@dataclass
class Certificate:
    cert: Path
    key: Path

    def server(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, self.key)
        return context

    def client(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.cert))


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> Certificate:
    """A self-signed certificate for 127.0.0.1."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    paths = Certificate(folder / "cert.pem", folder / "key.pem")
    paths.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


@pytest.fixture
def smtp_server() -> Iterator[tuple[int, Mailbox]]:
    """Plain SMTP on loopback."""
    mailbox = Mailbox()
    controller = Controller(mailbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield controller.port, mailbox
    finally:
        controller.stop()


def smtp(url: str, **options: Any) -> EmailChannel:
    return EmailChannel(SecretStr(url), "Approvals <approvals@example.com>", **options)


async def test_an_email_in_text_and_html_with_a_stable_message_id(
    smtp_server: tuple[int, Mailbox],
):
    port, mailbox = smtp_server
    channel, sent = smtp(f"smtp://127.0.0.1:{port}"), message()
    assert channel.reaches(BOB)
    await channel.send(BOB, sent, key=KEY)
    await channel.send(BOB, sent, key=KEY)  # a retry: the same Message-ID
    (envelope, mail), (_, again) = mailbox.mails
    assert envelope.rcpt_tos == ["bob@example.com"]
    assert envelope.mail_from == "approvals@example.com"
    assert mail["To"] == "Bob Baker <bob@example.com>"
    assert mail["From"] == "Approvals <approvals@example.com>"
    assert (
        mail["Subject"]
        == sent.subject
        == "Alice Adams asks you to approve: Expense 90 EUR for a taxi"
    )
    assert mail["Message-ID"] == again["Message-ID"] == message_id(KEY)
    assert mail["Auto-Submitted"] == "auto-generated"
    assert mail.get_content_type() == "multipart/alternative"
    text, html = (part.get_content().replace("\r\n", "\n") for part in mail.iter_parts())
    assert text == sent.text and html == sent.html
    assert "Bob Baker, Alice Adams asks you to approve" in text
    assert f"Approve: {LINKS.approve}" in text
    for internal in (INTERRUPT, "inbox:bob", "expense-call_9"):
        assert internal not in text and internal not in html


async def test_a_title_that_reorders_its_text_reaches_mail_and_chat_without_it(
    smtp_server: tuple[int, Mailbox], receiving: tuple[str, Received]
):
    port, mailbox = smtp_server
    url, received = receiving
    bidi = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
    spoof = NOTICE.model_copy(update={"title": f"refund \u202eRUE 0009\u202c{bidi}"})
    sent = render(spoof, BOB, LINKS, {"alice": f"Alice\u2067{bidi}"})
    await smtp(f"smtp://127.0.0.1:{port}").send(BOB, sent, key=KEY)
    chat = ChatChannel([SecretStr(f"json://{url.removeprefix('http://')}/chat/team")])
    await chat.send(BOB, sent, key=KEY)
    ((_, mail),) = mailbox.mails
    ((post,),) = received.chat.values()
    shown = [str(mail["Subject"]), *(str(p.get_content()) for p in mail.iter_parts())]
    for text in [*shown, post["title"], post["message"]]:
        assert not set(bidi) & set(text), text
    assert "RUE 0009" in str(mail["Subject"])


async def test_a_refused_recipient_or_a_dead_server_is_a_channel_error(
    smtp_server: tuple[int, Mailbox],
):
    port, mailbox = smtp_server
    nobody = Person(principal="nobody", email="nobody@refused.example")
    with pytest.raises(ChannelError) as refused:
        await smtp(f"smtp://127.0.0.1:{port}").send(nobody, message(), key=KEY)
    assert str(refused.value) == (
        f"email: smtp://127.0.0.1:{port} refused the recipient nobody@refused.example "
        "(550 5.1.1 no such mailbox here)"
    )
    assert mailbox.mails == []
    with pytest.raises(ChannelError, match="unreachable") as dead:
        await smtp(f"smtp://mailer:mail-pass@127.0.0.1:{free_port()}").send(BOB, message(), key=KEY)
    assert "mail-pass" not in str(dead.value)


async def test_a_server_that_never_answers_times_out():
    held: list[asyncio.StreamWriter] = []

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)  # accepted, never greeted

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        each_step = smtp(f"smtp://127.0.0.1:{port}", timeout=0.2)
        with pytest.raises(ChannelError, match=r"did not answer within 0\.2 s"):
            await each_step.send(BOB, message(), key=KEY)
        in_all = smtp(f"smtp://127.0.0.1:{port}", timeout=1, total_timeout=0.2)
        with pytest.raises(ChannelError, match=r"took longer than 0\.2 s"):
            await in_all.send(BOB, message(), key=KEY)
    finally:
        for writer in held:
            writer.close()
        server.close()
        await server.wait_closed()


async def test_no_address_no_email():
    channel = smtp("smtp://127.0.0.1:25")
    assert not channel.reaches(Person(principal="zoe"))
    assert not channel.reaches(BOB.model_copy(update={"channels": ["chat"]}))
    with pytest.raises(ValueError, match="expected smtp://host or smtps://host"):
        smtp("http://user:pass@mail.example.com")


async def test_starttls_and_credentials(certificate: Certificate):
    mailbox = Mailbox()

    def authenticate(
        server: SMTP, session: Session, envelope: Envelope, mechanism: str, data: Any
    ) -> AuthResult:
        assert isinstance(data, LoginPassword)
        ok = (data.login, data.password) == (b"mailer", b"p@ss:w/rd")
        return AuthResult(success=ok, handled=False)  # not handled: aiosmtpd answers 535

    controller = Controller(
        mailbox,
        hostname="127.0.0.1",
        port=free_port(),
        tls_context=certificate.server(),
        require_starttls=True,
        authenticator=authenticate,
        auth_required=True,
    )
    controller.start()
    try:
        base = f"127.0.0.1:{controller.port}?starttls=true"
        good = smtp(f"smtp://mailer:p%40ss%3Aw%2Frd@{base}", tls=certificate.client())
        await good.send(BOB, message(), key=KEY)
        assert [envelope.rcpt_tos for envelope, _ in mailbox.mails] == [["bob@example.com"]]

        wrong = smtp(f"smtp://mailer:wrong-pass@{base}", tls=certificate.client())
        with pytest.raises(ChannelError, match="refused the credentials") as refused:
            await wrong.send(BOB, message(), key=KEY)
        assert "wrong-pass" not in str(refused.value)

        untrusted = smtp(f"smtp://mailer:p%40ss%3Aw%2Frd@{base}")  # the system's roots
        with pytest.raises(ChannelError, match="unreachable \\(TLS: CERTIFICATE_VERIFY_FAILED\\)"):
            await untrusted.send(BOB, message(), key=KEY)
        assert len(mailbox.mails) == 1
    finally:
        controller.stop()


async def test_starttls_or_a_login_asked_of_a_server_without_it(
    smtp_server: tuple[int, Mailbox],
):
    port, mailbox = smtp_server
    with pytest.raises(ChannelError, match="does not offer STARTTLS"):
        await smtp(f"smtp://127.0.0.1:{port}?starttls=true").send(BOB, message(), key=KEY)
    with pytest.raises(ChannelError, match=r"does not offer AUTH \(PLAIN") as no_auth:
        await smtp(f"smtp://mailer:mail-pass@127.0.0.1:{port}").send(BOB, message(), key=KEY)
    assert "mail-pass" not in str(no_auth.value)
    assert mailbox.mails == []


async def test_implicit_tls(certificate: Certificate):
    mailbox = Mailbox()
    controller = Controller(
        mailbox, hostname="127.0.0.1", port=free_port(), ssl_context=certificate.server()
    )
    controller.start()
    try:
        channel = smtp(f"smtps://127.0.0.1:{controller.port}", tls=certificate.client())
        await channel.send(BOB, message(), key=KEY)
        assert mailbox.mails[0][1]["Message-ID"] == message_id(KEY)
    finally:
        controller.stop()


# -- a mail server that drips: it slows nothing else ---------------------------------------

DRIP = 2.0
"""Seconds between two bytes of a tarpit's answers: each of its answers takes over a minute,
and no step's timeout of ours ever sees a silence as long as itself."""
DEFAULT_EXECUTOR_THREADS = min(32, (os.cpu_count() or 1) + 4)
"""The size of the event loop's default executor (a `ThreadPoolExecutor`'s default)."""
IN_FLIGHT = DEFAULT_EXECUTOR_THREADS + 2
"""Sends kept in flight at once: more than the default executor has threads."""
PATIENCE = 30.0
"""Seconds a test waits for what should happen at once, so that it fails, not hangs."""


class Tarpit:
    """What a tarpit saw: connections accepted, and those the client has not closed yet. It
    runs on aiosmtpd's thread and loop; `until` waits on the test's loop for a condition."""

    def __init__(self) -> None:
        self.port = free_port()
        self.accepted = 0
        self.open = 0
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    def changed(self, accepted: int, opened: int) -> None:
        with self._lock:
            self.accepted += accepted
            self.open += opened
            waiters = list(self._waiters)
        for loop, event in waiters:
            loop.call_soon_threadsafe(event.set)

    async def until(self, condition: Callable[[], bool]) -> None:
        event = asyncio.Event()
        waiter = (asyncio.get_running_loop(), event)
        with self._lock:
            self._waiters.append(waiter)
        try:
            async with asyncio.timeout(PATIENCE):
                while not condition():
                    await event.wait()
                    event.clear()
        finally:
            with self._lock:
                self._waiters.remove(waiter)


class Dripping(SMTP):
    """aiosmtpd's server, writing each answer (its greeting first) one byte every `DRIP`."""

    def __init__(self, handler: Any, tarpit: Tarpit) -> None:
        super().__init__(handler)
        self.tarpit = tarpit
        self.client_closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.tarpit.changed(accepted=1, opened=1)
        super().connection_made(transport)

    def eof_received(self) -> bool:
        self._client_closed()
        super().eof_received()  # stops answering
        return False  # and closes our end too (aiosmtpd would keep it, half closed)

    def connection_lost(self, error: Exception | None) -> None:
        self._client_closed()
        super().connection_lost(error)

    def _client_closed(self) -> None:
        if not self.client_closed:
            self.client_closed = True
            self.tarpit.changed(accepted=0, opened=-1)

    async def push(self, status: str | bytes) -> None:
        answer = status.encode() if isinstance(status, str) else status
        for byte in answer + b"\r\n":
            self._writer.write(bytes([byte]))
            await asyncio.sleep(DRIP)


@pytest.fixture
def tarpit() -> Iterator[Tarpit]:
    seen = Tarpit()

    class Trap(Controller):
        def factory(self) -> SMTP:
            return Dripping(self.handler, seen)

    controller = Trap(Mailbox(), hostname="127.0.0.1", port=seen.port)
    controller.start()
    try:
        yield seen
    finally:
        controller.stop()


async def test_a_dripping_server_is_left_at_the_deadline_and_its_connection_closed(
    tarpit: Tarpit,
):
    channel = smtp(f"smtp://127.0.0.1:{tarpit.port}", total_timeout=1)
    before = tarpit.accepted  # aiosmtpd's own check that it started
    with pytest.raises(ChannelError, match=r"took longer than 1 s"):
        await channel.send(BOB, message(), key=KEY)
    # the tarpit had the connection, and it is closed: no socket (nor thread) holds it
    await tarpit.until(lambda: tarpit.accepted == before + 1 and tarpit.open == 0)


async def test_dripping_servers_hold_nothing_the_worker_shares(
    tarpit: Tarpit, receiving: tuple[str, Received]
):
    """More sends to a tarpit than the loop's default executor has threads, all in flight
    at once: meanwhile that executor runs work and name lookups, and a webhook is taken."""
    url, received = receiving
    loop = asyncio.get_running_loop()
    channel = smtp(f"smtp://127.0.0.1:{tarpit.port}", total_timeout=PATIENCE)
    before = tarpit.accepted  # aiosmtpd's own check that it started
    sends = [
        asyncio.create_task(channel.send(BOB, message(), key=f"{KEY}:{n}"))
        for n in range(IN_FLIGHT)
    ]
    try:
        connected = asyncio.create_task(tarpit.until(lambda: tarpit.accepted >= before + IN_FLIGHT))
        done, _ = await asyncio.wait([connected, *sends], return_when=asyncio.FIRST_COMPLETED)
        assert done == {connected}, "every send talks to the tarpit at once"
        connected.result()

        async def meanwhile() -> None:
            await loop.run_in_executor(None, threading.get_ident)
            await loop.getaddrinfo("localhost", 25)
            await WebhookChannel(f"{url}/hooks", SecretStr(SECRET)).send(BOB, message(), key=KEY)

        served = asyncio.create_task(meanwhile())
        done, _ = await asyncio.wait([served, *sends], return_when=asyncio.FIRST_COMPLETED)
        assert done == {served}, "the rest of the worker was served while the sends dripped"
        served.result()
        assert [headers["webhook-id"] for headers, _ in received.hooks] == [KEY]
    finally:
        for send in sends:  # the activity cancelled (a worker shutting down)
            send.cancel()
        await asyncio.gather(*sends, return_exceptions=True)
    await tarpit.until(lambda: tarpit.open == 0)


async def test_a_slow_name_lookup_of_the_mail_host_holds_no_thread_the_worker_shares(
    tarpit: Tarpit, monkeypatch: pytest.MonkeyPatch
):
    """The mail host's DNS answers late (its lookups wait until released): meanwhile the
    loop's default executor still runs work and looks other names up."""
    real = socket.getaddrinfo
    looking, release = asyncio.Event(), threading.Event()
    loop = asyncio.get_running_loop()

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "mail.slow-dns.test":
            loop.call_soon_threadsafe(looking.set)
            release.wait(PATIENCE)
            host = "127.0.0.1"
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    channel = smtp(f"smtp://mail.slow-dns.test:{tarpit.port}", total_timeout=PATIENCE)
    sends = [
        asyncio.create_task(channel.send(BOB, message(), key=f"{KEY}:{n}"))
        for n in range(IN_FLIGHT)
    ]
    try:
        await looking.wait()

        async def meanwhile() -> None:
            await loop.run_in_executor(None, threading.get_ident)
            await loop.getaddrinfo("localhost", 25)

        served = asyncio.create_task(meanwhile())
        done, _ = await asyncio.wait([served, *sends], return_when=asyncio.FIRST_COMPLETED)
        assert done == {served}, "the default executor was free while the lookups waited"
        served.result()
    finally:
        for send in sends:
            send.cancel()
        release.set()
        await asyncio.gather(*sends, return_exceptions=True)
    await tarpit.until(lambda: tarpit.open == 0)


async def test_the_notify_activity_retries_a_send_its_deadline_ended_and_mails_once(
    tarpit: Tarpit, smtp_server: tuple[int, Mailbox], client: Client, tmp_path: Path
):
    """The first attempt meets the tarpit: it fails, is recorded, and Temporal retries it;
    the next one meets a server that answers; one more sends nothing again."""
    principal = f"pat-{uuid.uuid4().hex[:8]}"
    people = tmp_path / "people.yaml"
    people.write_text(f"{principal}:\n  email: pat@example.com\n  channels: [email]\n")
    notice = NOTICE.model_copy(
        update={"key": f"{INTERRUPT}:{principal}:waiting", "principal": principal}
    )
    port, mailbox = smtp_server
    engine = open_engine(Settings().store_url)
    try:
        notifier, log = (
            Notifier(client, Settings(directory_file=people), engine),
            NotificationLog(engine),
        )
        notifier.channels = [smtp(f"smtp://127.0.0.1:{tarpit.port}", total_timeout=1)]
        with pytest.raises(ApplicationError, match="not taken by email; retried"):
            await ActivityEnvironment().run(notifier.notify, notice)
        await tarpit.until(lambda: tarpit.open == 0)
        (failed,) = await log.for_principal(principal)
        assert (failed.status, failed.attempts) == ("failed", 1)
        assert failed.error is not None and "took longer than 1 s" in failed.error
        notifier.channels = [smtp(f"smtp://127.0.0.1:{port}")]
        for _ in range(2):
            await ActivityEnvironment().run(notifier.notify, notice)
        (sent,) = await log.for_principal(principal)
        assert (sent.status, sent.attempts) == ("sent", 2)
    finally:
        await engine.dispose()
    assert [mail["Message-ID"] for _, mail in mailbox.mails] == [message_id(notice.key)]


# -- chat (Apprise) -----------------------------------------------------------------------


async def test_chat_posts_to_the_global_and_the_persons_own_services(
    receiving: tuple[str, Received],
):
    url, received = receiving
    host = url.removeprefix("http://")
    channel = ChatChannel([SecretStr(f"json://{host}/chat/team")])
    carol = Person(principal="carol", apprise=[SecretStr(f"json://{host}/chat/carol")])
    sent = message()
    await channel.send(carol, sent, key=KEY)
    assert set(received.chat) == {"team", "carol"}
    for posts in received.chat.values():
        # Apprise trims the body's last line break
        assert [(p["title"], p["message"]) for p in posts] == [(sent.subject, sent.text.rstrip())]


async def test_a_chat_service_that_fails_is_a_channel_error_without_its_url():
    dead = dead_url("/chat/team").replace("http://", "json://token-user:token-pass@")
    with pytest.raises(ChannelError, match=r"chat: 1 of 1 services failed \(JSON\)") as failed:
        await ChatChannel([SecretStr(dead)]).send(BOB, message(), key=KEY)
    assert "token-pass" not in str(failed.value) and "127.0.0.1" not in str(failed.value)
    bad = Person(principal="bob", apprise=[SecretStr("nonsense://secret-token")])
    with pytest.raises(ChannelError, match="bob's Apprise URL #1 is not valid") as invalid:
        await ChatChannel([]).send(bad, message(), key=KEY)
    assert "secret-token" not in str(invalid.value)


async def test_chat_reaches_those_with_a_service_who_want_it():
    own = Person(principal="carol", apprise=[SecretStr("json://127.0.0.1:9/x")])
    assert not ChatChannel([]).reaches(BOB)
    assert ChatChannel([]).reaches(own)
    assert ChatChannel([SecretStr("json://127.0.0.1:9/x")]).reaches(BOB)
    assert not ChatChannel([]).reaches(own.model_copy(update={"channels": ["email"]}))


def test_the_settings_configure_the_channels():
    assert [c.name for c in channels_from(Settings())] == ["chat"]
    configured = Settings(
        notify_webhook_url="https://hooks.example.com/in",
        notify_webhook_secret=SecretStr(SECRET),
        smtp_url=SecretStr("smtps://mailer:secret@mail.example.com"),
    )
    webhook, email, chat = channels_from(configured)
    assert (webhook.name, email.name, chat.name) == ("webhook", "email", "chat")
    assert isinstance(email, EmailChannel)
    assert (email.host, email.port, email.implicit_tls, email.user) == (
        "mail.example.com",
        465,
        True,
        "mailer",
    )
