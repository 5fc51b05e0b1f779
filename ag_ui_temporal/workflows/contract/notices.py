"""Notices: telling a person that something waits for them, outside the chat.

A notice is one message to one principal about one interrupt (or one chain's outcome), of
one kind, sent once per `key` across workers and restarts: its key is the id of the
`AguiNotification` workflow that delivers it and of its rows in the store's `notifications`
table. Workflows name who is told and why; the notify room (`ag_ui_temporal.notify`) finds
the person's addresses in the directory, renders the message and sends it on every channel.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Literal

from pydantic import BaseModel, Field

from ag_ui_temporal.workflows.contract.chains import APPROVAL_METADATA_KEY
from ag_ui_temporal.workflows.contract.names import fitted_key

NOTIFICATION_WORKFLOW = "AguiNotification"
"""Workflow (thread task queue): deliver one `Notice`, retrying each failing channel."""
NOTIFY_ACTIVITY = "agui_notify"
"""Activity (thread task queue): send one `Notice` on every channel not yet done."""
START_NOTICES_ACTIVITY = "agui_start_notices"
"""Activity (thread task queue): start one `AguiNotification` per notice (`Notices`); a key
already started is skipped. Never talks to a channel, so it never waits for one."""

NoticeKind = Literal["waiting", "reminder", "escalated", "delegated", "outcome"]
"""`waiting`: an interrupt waits for this person (a chain seat, a producer's named resolver);
`reminder`: it still does; `escalated` / `delegated`: it came to them by escalation or
delegation; `outcome`: the chain they requested is decided."""

MAX_NOTICE_TEXT = 2_000
"""The longest message or title a notice carries (the interrupt's own may be longer)."""


def notification_workflow_id(key: str) -> str:
    return f"agui-notify:{key}"


def notice_key(subject: str, principal: str, kind: str, nth: str | None = None) -> str:
    """Once per (interrupt or chain, principal, kind[, which reminder]) (`fitted_key`)."""
    return fitted_key(subject, principal, kind, *([nth] if nth else []))


class Notice(BaseModel):
    """One message to one principal (input of `agui_notify` and `AguiNotification`)."""

    key: str
    kind: NoticeKind
    principal: str
    """Who is told (a person: a `group:G` resolver is expanded before a notice is made)."""
    thread_id: str
    """Where it waits (`inbox:P` for a chain's seat); for an outcome, the chain's inbox of the
    requester or their chat thread."""
    interrupt_id: str | None = None
    reason: str | None = None
    message: str = Field("", max_length=MAX_NOTICE_TEXT)
    expires_at: str | None = None
    response_schema: dict[str, Any] | None = None
    """The interrupt's `responseSchema`: which one-click decisions a link may carry."""
    chain_id: str | None = None
    title: str | None = Field(None, max_length=MAX_NOTICE_TEXT)
    step: str | None = None
    requester: str | None = None
    delegated_from: str | None = None
    outcome: str | None = None
    """An outcome notice's decision: `approved`, `rejected`, `cancelled`."""


class Notices(BaseModel):
    """Input of `agui_start_notices`."""

    notices: list[Notice]


def approval_of(interrupt: dict[str, Any]) -> dict[str, Any]:
    """The chain's metadata on a seat's interrupt (`{}` for any other interrupt)."""
    metadata = interrupt.get("metadata")
    approval = metadata.get(APPROVAL_METADATA_KEY) if isinstance(metadata, dict) else None
    return approval if isinstance(approval, dict) else {}


class NotificationInput(BaseModel):
    """Input of `AguiNotification`: the notice, and how long its delivery is retried."""

    notice: Notice
    give_up_after: timedelta
    max_retry_interval: timedelta
