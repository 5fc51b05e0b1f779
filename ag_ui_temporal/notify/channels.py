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
import hashlib
import json
import smtplib
import ssl
import warnings
from datetime import UTC, datetime
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Protocol
from urllib.parse import parse_qs, unquote, urlsplit

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
"""Seconds for each step of an SMTP conversation (connect, each command)."""
SMTP_TOTAL_TIMEOUT = 60.0
"""Seconds for one whole SMTP conversation. With the others' this stays inside one attempt
of the notify activity (`workflows.notices.workflow.ATTEMPT_TIMEOUT`, two minutes)."""
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
            async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as http:
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
    directory address."""

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
        try:
            # smtplib blocks: a thread. A server that drips its answers is left behind (its
            # socket timeouts end the thread); a retry then sends with the same Message-ID.
            await asyncio.wait_for(
                asyncio.to_thread(self._deliver, mail, person.email), self.total_timeout
            )
        except TimeoutError:
            raise ChannelError(
                f"email: {self.server} took longer than {self.total_timeout:g} s"
            ) from None

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

    def _deliver(self, mail: EmailMessage, to: str) -> None:
        """Blocking (smtplib): runs in a thread. Every step is bounded by `timeout`."""
        try:
            smtp: smtplib.SMTP
            if self.implicit_tls:
                smtp = smtplib.SMTP_SSL(
                    self.host, self.port, timeout=self.timeout, context=self.tls
                )
            else:
                smtp = smtplib.SMTP(self.host, self.port, timeout=self.timeout)
            with smtp:
                if self.starttls:
                    smtp.starttls(context=self.tls)
                if self.user is not None:
                    smtp.login(self.user, self.password)
                smtp.send_message(mail, to_addrs=[to])
        except smtplib.SMTPRecipientsRefused as err:
            refused = "; ".join(f"{a} ({c} {_said(m)})" for a, (c, m) in err.recipients.items())
            raise ChannelError(f"email: {self.server} refused the recipient {refused}") from None
        except smtplib.SMTPAuthenticationError as err:
            raise ChannelError(
                f"email: {self.server} refused the credentials ({err.smtp_code})"
            ) from None
        except smtplib.SMTPResponseException as err:
            raise ChannelError(
                f"email: {self.server} answered {err.smtp_code} {_said(err.smtp_error)}"
            ) from None
        except smtplib.SMTPNotSupportedError:
            raise ChannelError(f"email: {self.server} does not offer STARTTLS or AUTH") from None
        except (smtplib.SMTPException, OSError) as err:  # refused, reset, timeouts, TLS
            raise ChannelError(f"email: {self.server} unreachable ({_reason(err)})") from None


def _said(answer: bytes | str) -> str:
    text = answer.decode(errors="replace") if isinstance(answer, bytes) else answer
    return " ".join(text.split())[:200]


def _reason(err: BaseException) -> str:
    """smtplib's and the socket's words (they never hold the credentials)."""
    if isinstance(err, TimeoutError):
        return "timed out"
    if isinstance(err, ssl.SSLError):
        return f"TLS: {err.reason or err}"
    if isinstance(err, smtplib.SMTPException):
        return _said(str(err)) or type(err).__name__
    return err.strerror if isinstance(err, OSError) and err.strerror else type(err).__name__


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
