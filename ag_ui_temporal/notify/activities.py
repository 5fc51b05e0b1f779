"""The notices' activities: start one delivery per notice, and deliver one on every channel.

`Notifier.start` is called by the producers' activity when an offer names who may answer
it (each named principal, `group:G` expanded through the directory, is told it waits), and
by `agui_start_notices` for what chains tell (reminders, outcomes). Each notice becomes an
`AguiNotification` workflow whose id is the notice's key: once per key, on any worker.

`agui_notify` sends one notice on each channel that reaches the person and has not taken it
yet (`store.notifications`), and fails while a channel refuses, so that Temporal retries it
with backoff. The webhook's `webhook-id` and the email's `Message-ID` are the key: a
receiver that saw an attempt whose answer was lost can tell the retry is the same notice.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from urllib.parse import urlencode

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio import activity
from temporalio.client import Client
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from ag_ui_temporal.notify import links
from ag_ui_temporal.notify.channels import Channel, ChannelError, channels_from
from ag_ui_temporal.notify.directory import Directory, People, Person
from ag_ui_temporal.notify.render import Links, render
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.store import NotificationLog
from ag_ui_temporal.store.notifications import DeliveryStatus
from ag_ui_temporal.workflows.contract import (
    OFFER_INTERRUPT_SIGNAL,
    OfferInterrupt,
    ThreadSignal,
)
from ag_ui_temporal.workflows.contract.notices import (
    MAX_NOTICE_TEXT,
    NOTIFICATION_WORKFLOW,
    NOTIFY_ACTIVITY,
    START_NOTICES_ACTIVITY,
    Notice,
    NoticeKind,
    Notices,
    NotificationInput,
    approval_of,
    notice_key,
    notification_workflow_id,
)

log = logging.getLogger(__name__)

MAX_TOLD = 100
"""The most people one offer tells (a `group:G` of thousands is a broadcast, not a seat)."""


class Notifier:
    """The notify room's activities, on the thread workers (`worker.py`)."""

    def __init__(self, client: Client, settings: Settings, engine: AsyncEngine) -> None:
        self.client = client
        self.settings = settings
        self.people = People(Directory.load(settings.directory_file), engine)
        self.channels: list[Channel] = channels_from(settings)
        self.log = NotificationLog(engine)
        self.enabled = settings.notifies or self.people.directory.has_own_channels()
        """Whether anyone can be told anything: a channel is set, or someone in the directory
        has Apprise URLs of their own. If not, no notice is started at all."""

    # -- starting -----------------------------------------------------------------------

    async def start(self, notices: list[Notice]) -> None:
        """One `AguiNotification` per notice; a key started before is left as it is."""
        if not self.enabled:
            return
        for notice in notices:
            request = NotificationInput(
                notice=notice,
                give_up_after=self.settings.notify_give_up_after,
                max_retry_interval=self.settings.notify_max_retry_interval,
            )
            try:
                await self.client.start_workflow(
                    NOTIFICATION_WORKFLOW,
                    request,
                    id=notification_workflow_id(notice.key),
                    task_queue=self.settings.task_queue,
                    id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                )
            except WorkflowAlreadyStartedError:
                pass  # told before (a retried activity, a replayed chain): once per key
            except RPCError as err:
                if err.status != RPCStatusCode.INVALID_ARGUMENT:
                    raise  # Temporal is away: the calling activity is retried, keys dedupe
                # a notice Temporal refuses for good must not fail the offer that caused it
                log.warning("notice %s not started: %s", notice.key[:200], err.message)

    @activity.defn(name=START_NOTICES_ACTIVITY)
    async def start_notices(self, request: Notices) -> None:
        await self.start(request.notices)

    async def offered(self, signal: ThreadSignal) -> None:
        """The producers' activity delivered `signal`: if it offered an interrupt to named
        people, tell each of them it waits."""
        if signal.signal != OFFER_INTERRUPT_SIGNAL or not self.enabled:
            return
        offer = OfferInterrupt.model_validate(signal.arg)
        if not offer.allowed_resolvers:
            return  # anyone who may act on the thread: nobody in particular to tell
        told = self.people.directory.expand(offer.allowed_resolvers)[:MAX_TOLD]
        await self.start([offer_notice(signal.thread_id, offer, p) for p in told])

    # -- delivering ---------------------------------------------------------------------

    @activity.defn(name=NOTIFY_ACTIVITY)
    async def notify(self, notice: Notice) -> None:
        person = await self.people.person(notice.principal)
        message = render(notice, person, self._links(notice, person), self.people.directory.names())
        failed: list[str] = []
        for channel in self.channels:
            if not channel.reaches(person) or await self.log.sent(notice.key, channel.name):
                continue
            try:
                await channel.send(person, message, key=notice.key)
            except ChannelError as err:
                failed.append(channel.name)
                self._count(channel.name, notice.kind, "failed")
                log.warning(
                    "notice %s to %s not taken by %s (attempt %d): %s",
                    notice.key, notice.principal, channel.name, activity.info().attempt, err,
                )  # fmt: skip
                await self._record(notice, channel.name, "failed", str(err))
            else:
                self._count(channel.name, notice.kind, "sent")
                await self._record(notice, channel.name, "sent")
        if failed:
            raise ApplicationError(
                f"not taken by {', '.join(failed)}; retried", type="NoticeNotDelivered"
            )

    def _links(self, notice: Notice, person: Person) -> Links:
        base = self.settings.base_url
        inbox = f"{base}/?{urlencode({'view': 'inbox', 'principal': person.principal})}"
        secret = self.settings.decision_link_secret
        if secret is None or notice.interrupt_id is None or notice.kind == "outcome":
            return Links(inbox=inbox)
        decided: dict[str, str | None] = {}
        for decision in ("approve", "reject"):
            payload = links.one_click_payload(notice.reason, notice.response_schema, decision)
            if payload is None:
                return Links(inbox=inbox)  # the form needs more than a click: the inbox
            token = links.mint(
                secret.get_secret_value(),
                thread_id=notice.thread_id,
                interrupt_id=notice.interrupt_id,
                principal=person.principal,
                decision=decision,
                expires_at=_parsed(notice.expires_at),
                now=datetime.now(UTC),
            )
            decided[decision] = links.decision_url(base, token)
        return Links(inbox=inbox, approve=decided["approve"], reject=decided["reject"])

    async def _record(
        self, notice: Notice, channel: str, status: DeliveryStatus, error: str | None = None
    ) -> None:
        await self.log.record(
            key=notice.key,
            channel=channel,
            kind=notice.kind,
            principal=notice.principal,
            thread_id=notice.thread_id,
            interrupt_id=notice.interrupt_id,
            chain_id=notice.chain_id,
            status=status,
            error=error,
        )

    @staticmethod
    def _count(channel: str, kind: str, result: str) -> None:
        counter = activity.metric_meter().create_counter(
            "agui_notifications", "Notices a channel took (sent) or refused (failed)."
        )
        counter.add(1, {"channel": channel, "kind": kind, "result": result})


def offer_notice(thread_id: str, offer: OfferInterrupt, principal: str) -> Notice:
    """What `principal` is told about an offered interrupt: that it waits for them, or that
    it came to them by a chain's escalation or delegation."""
    interrupt = offer.interrupt
    approval = approval_of(interrupt)
    kind: NoticeKind = "waiting"
    if approval.get("escalation"):
        kind = "escalated"
    elif approval.get("delegatedFrom"):
        kind = "delegated"
    interrupt_id = str(interrupt["id"])
    schema = interrupt.get("responseSchema")
    return Notice(
        key=notice_key(interrupt_id, principal, kind),
        kind=kind,
        principal=principal,
        thread_id=thread_id,
        interrupt_id=interrupt_id,
        reason=_text(interrupt.get("reason")),
        message=_text(interrupt.get("message")) or "",
        expires_at=_text(interrupt.get("expiresAt")),
        response_schema=schema if isinstance(schema, dict) else None,
        chain_id=_text(approval.get("chainId")),
        title=_text(approval.get("title")),
        step=_text(approval.get("step")),
        requester=_text(approval.get("requester")),
        delegated_from=_text(approval.get("delegatedFrom")),
    )


def _text(value: object) -> str | None:
    return value[:MAX_NOTICE_TEXT] if isinstance(value, str) else None


def _parsed(value: str | None) -> datetime | None:
    try:
        return None if value is None else datetime.fromisoformat(value)
    except ValueError:
        return None
