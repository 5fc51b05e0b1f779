"""The channels a notice goes out on: a signed webhook, email over SMTP, chat through Apprise.

Each channel sends one rendered `Message` to one `Person` and raises `ChannelError` when it
was not taken (the notify activity records it and Temporal retries). A channel's `key` is
the notice's: the webhook's `webhook-id` and the email's `Message-ID` stay the same on
every retry, so a receiver that got an attempt whose answer was lost can drop the repeat.
A `ChannelError` says what failed in words an operator can act on, and never carries a
secret: no URL password, no webhook secret, no Apprise URL (they hold service tokens).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import socket
import ssl
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Any, Protocol
from urllib.parse import parse_qs, unquote, urlsplit

import aiosmtplib
import apprise
import httpx
from pydantic import SecretStr
from standardwebhooks import Webhook

from ag_ui_temporal.notify.directory import ChannelName, Person
from ag_ui_temporal.notify.render import Message
from ag_ui_temporal.settings import Settings

with warnings.catch_warnings():
    # Apprise's email plugin imports (through PGPy) the standard library's `imghdr`, which
    # warns that it is deprecated on Python 3.11 and 3.12 (Apprise shims it where it is gone).
    # Imported once here, quietly, so that Apprise loading its plugins warns of nothing.
    warnings.filterwarnings("ignore", "'imghdr' is deprecated", DeprecationWarning)
    with contextlib.suppress(ImportError):
        import imghdr  # noqa: F401

WEBHOOK_TIMEOUT = 10.0
"""Seconds a webhook receiver has to answer."""
SMTP_TIMEOUT = 20.0
"""Seconds for each step of an SMTP conversation (connecting, each answer of the server)."""
SMTP_TOTAL_TIMEOUT = 60.0
"""Seconds for one whole SMTP conversation, from the name lookup to the last answer; then
its connection is closed. With the others' this stays inside one attempt of the notify
activity (`workflows.notices.workflow.ATTEMPT_TIMEOUT`, two minutes)."""
RESOLVER_THREADS = 2
"""Threads for the email channel's name lookups (they block, and only they wait for them)."""
CHAT_TIMEOUT = 30.0
"""Seconds Apprise has for all of one person's chat services."""
MAX_WEBHOOK_ID = 200
"""A longer key (or one that is not printable ASCII) is sent as its digest."""


class ChannelError(Exception):
    """The channel did not take the message. The text names what failed, never a secret."""


class Channel(Protocol):
    name: ChannelName

    def reaches(self, person: Person) -> bool:
        """Whether this channel is set up for `person` and they want it."""
        ...

    async def send(self, person: Person, message: Message, *, key: str) -> None:
        """Deliver `message`; `ChannelError` if it was not taken."""
        ...


def where(url: str) -> str:
    """A URL as errors and logs may show it: scheme, host and port, nothing that could be a
    credential (user, password, path and query may all hold one)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or "?"
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "an unparsable URL"
    return f"{parts.scheme}://{host}{port}"


def message_id(key: str) -> str:
    """The email's `Message-ID`: one per notice, the same on every retry."""
    return f"<{hashlib.sha256(key.encode()).hexdigest()[:32]}@ag-ui-temporal>"


def webhook_id(key: str) -> str:
    """The webhook's `webhook-id`: the key itself when it fits in a header."""
    if len(key) <= MAX_WEBHOOK_ID and key.isascii() and key.isprintable():
        return key
    return "msg_" + hashlib.sha256(key.encode()).hexdigest()[:32]


# -- webhook -----------------------------------------------------------------------------


class WebhookChannel:
    """`POST` the message's JSON body, signed per Standard Webhooks (`webhook-id`,
    `webhook-timestamp`, `webhook-signature`); any 2xx is taken."""

    name: ChannelName = "webhook"

    def __init__(self, url: str, secret: SecretStr, *, timeout: float = WEBHOOK_TIMEOUT) -> None:
        self.url = url
        self.signer = Webhook(secret.get_secret_value())
        self.timeout = timeout
        # httpx's own, once for the channel's life: it builds one per client otherwise,
        # loading the CA bundle again (tens of ms of CPU) for every notice
        self.tls = httpx.create_ssl_context()

    def reaches(self, person: Person) -> bool:
        return person.wants(self.name)

    async def send(self, person: Person, message: Message, *, key: str) -> None:
        # the bytes signed are the bytes sent: compact JSON, encoded once
        body = json.dumps(message.body, separators=(",", ":"), ensure_ascii=False)
        msg_id, now = webhook_id(key), datetime.now(UTC)
        headers = {
            "content-type": "application/json",
            "webhook-id": msg_id,
            "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": self.signer.sign(msg_id, now, body),
        }
        try:
            async with httpx.AsyncClient(
                timeout=self.timeout, follow_redirects=False, verify=self.tls
            ) as http:
                response = await http.post(self.url, content=body.encode(), headers=headers)
        except httpx.TimeoutException:
            raise ChannelError(
                f"webhook {where(self.url)} did not answer within {self.timeout:g} s"
            ) from None
        except httpx.HTTPError as err:
            raise ChannelError(
                f"webhook {where(self.url)} unreachable ({type(err).__name__})"
            ) from None
        if not response.is_success:
            raise ChannelError(
                f"webhook {where(self.url)} answered {response.status_code} "
                f"{response.reason_phrase}".rstrip()
            )


# -- email -------------------------------------------------------------------------------


class EmailChannel:
    """Email over SMTP: `smtp://[user:password@]host[:port][?starttls=true]`, or `smtps://`
    for TLS from the start. A multipart/alternative mail (text and HTML) to the person's
    directory address.

    The conversation is asynchronous (aiosmtplib), under one deadline from the name lookup
    to the server's last answer, and its connection is aborted when it ends however it ends:
    a server that drips its answers holds a socket for `total_timeout` at most, and no
    thread at all. The name lookup runs on threads of the channel's own (`_RESOLVER`), never
    on the event loop's default executor, which the rest of the worker shares."""

    name: ChannelName = "email"

    def __init__(
        self,
        smtp_url: SecretStr,
        sender: str,
        *,
        timeout: float = SMTP_TIMEOUT,
        total_timeout: float = SMTP_TOTAL_TIMEOUT,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        """`tls`: how the server's certificate is checked (default: the system's roots)."""
        url = smtp_url.get_secret_value()
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            raise ValueError("SMTP_URL: not a URL") from None
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ValueError(f"SMTP_URL: expected smtp://host or smtps://host, not {where(url)}")
        query = parse_qs(parts.query)
        self.implicit_tls = parts.scheme == "smtps"
        self.starttls = query.get("starttls", ["false"])[-1].lower() in ("true", "1", "yes")
        self.host = parts.hostname
        self.port = port or (465 if self.implicit_tls else 587 if self.starttls else 25)
        self.user = unquote(parts.username) if parts.username else None
        self.password = unquote(parts.password or "")
        self.sender = sender
        self.timeout = timeout
        self.total_timeout = total_timeout
        self.tls = tls or ssl.create_default_context()
        self.server = f"{parts.scheme}://{self.host}:{self.port}"
        """As errors show it: no credentials."""

    def reaches(self, person: Person) -> bool:
        return person.email is not None and person.wants(self.name)

    async def send(self, person: Person, message: Message, *, key: str) -> None:
        if person.email is None:
            raise ChannelError(f"email: {person.principal} has no address")
        mail = self.compose(person, message, key=key)
        opened: list[socket.socket] = []
        client = _Client(
            hostname=self.host,
            timeout=self.timeout,
            use_tls=self.implicit_tls,
            start_tls=False,  # asked for below, where a server without it is told apart
            tls_context=self.tls,
        )
        deadline, taken = asyncio.timeout(self.total_timeout), False
        try:
            async with deadline:
                await self._converse(client, opened)
                await client.send_message(mail, recipients=[person.email])
                taken = True
                with contextlib.suppress(aiosmtplib.SMTPException):
                    await client.quit()  # a courtesy: the mail is taken already
        except (aiosmtplib.SMTPException, OSError) as err:  # TimeoutError is an OSError
            if not deadline.expired():
                raise self._failure(err) from None
            if not taken:
                raise ChannelError(
                    f"email: {self.server} took longer than {self.total_timeout:g} s"
                ) from None
        finally:
            # whatever ended the conversation (its deadline, a cancelled activity): the
            # socket is closed now, not after a goodbye a tarpit would never answer
            client.close()
            for sock in opened:
                sock.close()

    async def _converse(self, client: aiosmtplib.SMTP, opened: list[socket.socket]) -> None:
        """Look the server up (`_RESOLVER`), connect to its first address that answers, and
        greet it: STARTTLS and login when the URL asks for them."""
        loop = asyncio.get_running_loop()
        addresses, local_name = await loop.run_in_executor(
            _RESOLVER, _resolve, self.host, self.port
        )
        failed: OSError = OSError(f"no address for {self.host}")
        for family, kind, proto, _, address in addresses:
            try:
                sock = socket.socket(family, kind, proto)
                opened.append(sock)
                sock.setblocking(False)
                async with asyncio.timeout(self.timeout):
                    await loop.sock_connect(sock, address)
            except OSError as err:  # refused, unreachable, timed out: the next address
                failed = err
                continue
            # the address is numeric: aiosmtplib looks nothing up; `hostname` is for TLS
            await client.connect(sock=sock, local_hostname=local_name)
            break
        else:
            raise failed
        if self.starttls:
            await client.ehlo()
            if not client.supports_extension("starttls"):
                raise ChannelError(f"email: {self.server} does not offer STARTTLS")
            await client.starttls()
        if self.user is not None:
            await client.ehlo()
            if not client.supported_auth_methods:
                raise ChannelError(
                    f"email: {self.server} does not offer AUTH (PLAIN, LOGIN or CRAM-MD5)"
                )
            await client.login(self.user, self.password)

    def compose(self, person: Person, message: Message, *, key: str) -> EmailMessage:
        assert person.email is not None
        mail = EmailMessage()
        try:
            user, domain = person.email.rsplit("@", 1)
            mail["To"] = Address(display_name=person.name or "", username=user, domain=domain)
            mail["From"] = self.sender
            mail["Subject"] = message.subject
        except (ValueError, TypeError) as err:  # the email package's header checks
            raise ChannelError(f"email: cannot address {person.email!r} ({err})") from None
        mail["Date"] = format_datetime(datetime.now(UTC))
        mail["Message-ID"] = message_id(key)
        mail["Auto-Submitted"] = "auto-generated"  # RFC 3834: no auto-replies to this
        mail.set_content(message.text)
        mail.add_alternative(message.html, subtype="html")
        return mail

    def _failure(self, err: aiosmtplib.SMTPException | OSError) -> ChannelError:
        """What failed, in the server's words (they never hold the credentials)."""
        server = self.server
        if isinstance(err, aiosmtplib.SMTPRecipientsRefused):
            refused = "; ".join(
                f"{r.recipient} ({r.code} {_said(r.message)})" for r in err.recipients
            )
            return ChannelError(f"email: {server} refused the recipient {refused}")
        if isinstance(err, aiosmtplib.SMTPAuthenticationError):
            return ChannelError(f"email: {server} refused the credentials ({err.code})")
        if isinstance(err, aiosmtplib.SMTPTimeoutError):
            return ChannelError(f"email: {server} did not answer within {self.timeout:g} s")
        if isinstance(err, aiosmtplib.SMTPResponseException):
            return ChannelError(f"email: {server} answered {err.code} {_said(err.message)}")
        if isinstance(err, OSError):  # aiosmtplib's lost connections are ConnectionErrors
            return ChannelError(f"email: {server} unreachable ({_reason(err)})")
        return ChannelError(f"email: {server} failed ({_said(err.message) or type(err).__name__})")


class _Client(aiosmtplib.SMTP):
    """aiosmtplib's client, whose every close is an abort. Its own close is graceful: it
    waits to write what is buffered and, on TLS, for the server's close_notify, which a
    server that stopped reading never lets happen."""

    def close(self) -> None:
        if isinstance(self.transport, asyncio.Transport):
            self.transport.abort()
        super().close()


_RESOLVER = ThreadPoolExecutor(max_workers=RESOLVER_THREADS, thread_name_prefix="smtp-resolve")
"""The email channel's name lookups. `getaddrinfo` blocks and cannot be cancelled: on the
loop's default executor, a mail host whose DNS is slow would hold the threads every other
lookup of the worker waits for (its database's, its model providers')."""


def _resolve(host: str, port: int) -> tuple[Sequence[_AddrInfo], str]:
    """The server's addresses, and our name for EHLO (the standard library's choice)."""
    return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM), _local_name()


@functools.cache
def _local_name() -> str:
    return socket.getfqdn()


_AddrInfo = tuple[socket.AddressFamily, socket.SocketKind, int, str, Any]


def _said(answer: str) -> str:
    return " ".join(answer.split())[:200]


def _reason(err: BaseException) -> str:
    """The socket's or TLS's words for a connection that failed."""
    cause = err.__cause__ if isinstance(err, aiosmtplib.SMTPException) and err.__cause__ else err
    if isinstance(cause, ssl.SSLError):
        return f"TLS: {cause.reason or cause}"
    if isinstance(cause, TimeoutError):
        return "timed out"
    if isinstance(cause, aiosmtplib.SMTPException):
        return _said(cause.message) or type(cause).__name__
    return cause.strerror if isinstance(cause, OSError) and cause.strerror else type(cause).__name__


# -- chat (Apprise) ----------------------------------------------------------------------


class ChatChannel:
    """Chat services through Apprise: `APPRISE_URLS` (every notice) plus the person's own
    (`apprise` in the directory). The subject is the title, the plain text the body."""

    name: ChannelName = "chat"

    def __init__(self, urls: list[SecretStr], *, timeout: float = CHAT_TIMEOUT) -> None:
        self.urls = list(urls)
        self.timeout = timeout

    def reaches(self, person: Person) -> bool:
        return bool(self.urls or person.apprise) and person.wants(self.name)

    async def send(self, person: Person, message: Message, *, key: str) -> None:
        services = apprise.Apprise()
        for index, url in enumerate([*self.urls, *person.apprise]):
            if not services.add(url.get_secret_value()):
                whose = "APPRISE_URLS" if index < len(self.urls) else f"{person.principal}'s"
                raise ChannelError(f"chat: {whose} Apprise URL #{index + 1} is not valid")
        result = await services.async_notify(
            title=message.subject,
            body=message.text,
            body_format=apprise.NotifyFormat.TEXT,
            timeout=self.timeout,
        )
        if not result:
            failed = [r.name for r in result.results if not r]
            names = ", ".join(failed) if failed else result.status.name.lower()
            raise ChannelError(
                f"chat: {len(failed) or 'no'} of {len(result.results)} services failed ({names})"
            )


# -- configuration -----------------------------------------------------------------------


def channels_from(settings: Settings) -> list[Channel]:
    """The channels the settings configure. Chat is always there: a person's own Apprise
    URLs reach them even with no `APPRISE_URLS` (it reaches nobody else then)."""
    channels: list[Channel] = []
    if settings.notify_webhook_url and settings.notify_webhook_secret is not None:
        channels.append(WebhookChannel(settings.notify_webhook_url, settings.notify_webhook_secret))
    if settings.smtp_url is not None:
        channels.append(EmailChannel(settings.smtp_url, settings.smtp_from))
    channels.append(ChatChannel(settings.apprise_urls))
    return channels
