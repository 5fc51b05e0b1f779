"""Wire models between a thread and the workflows that offer it interrupts or post to it.

A producer reaches a thread through the `agui_signal_thread` activity (signal-with-
start); the thread routes each settlement to the interrupt's owner, asks the owner
before accepting an answer, and answers the owner's confirmation query.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from ag_ui_temporal.workflows.contract.names import WireDict
from ag_ui_temporal.workflows.contract.runs import DecisionVia

SettledStatus = Literal["resolved", "cancelled", "expired"]
"""How an interrupt ended, as its owner hears it."""

REFUSED_KEPT = 200
"""Refused offers a thread remembers (their owners confirm the refusal within seconds)."""


class OfferInterrupt(BaseModel):
    """Input of the `offer_interrupt` signal."""

    owner_workflow_id: str
    interrupt: WireDict
    """AG-UI `Interrupt` wire dict: id, reason, message, responseSchema?, expiresAt?, metadata?"""
    allowed_resolvers: list[str] | None = None


class WithdrawInterrupt(BaseModel):
    """Input of the `withdraw_interrupt` signal (only the interrupt's owner may withdraw)."""

    owner_workflow_id: str
    interrupt_id: str
    reason: str | None = None


class PostMessage(BaseModel):
    """Input of the `post_message` signal: one assistant text message."""

    message_id: str
    """Also the idempotency key: a message id the thread has is ignored."""
    text: str


class InterruptSettled(BaseModel):
    """Input of the owner-side `agui_interrupt_settled` signal."""

    interrupt_id: str
    thread_id: str
    status: SettledStatus
    payload: Any = None
    metadata: dict[str, Any] | None = None
    """The answer's metadata as the client sent it; a refused offer's names why
    (`offer_refusal`)."""
    run_id: str | None = None
    """The run that carried the answer (None for an expiry)."""
    principal: str | None = None
    """Who answered (the run's principal, `RunRequest.principal`); None for an expiry (also
    one a client's cancel acknowledged), a refused offer, or a run that named nobody."""
    via: DecisionVia | None = None
    """How the answer came (`RunRequest.via`: chat, link, api, cli); None for an expiry, a
    refused offer, or a thread from before it recorded how. Owners hear both as
    `InterruptOutcome.principal` and `.via`."""
    at: str | None = None
    """When the thread settled it (ISO 8601, workflow time); None for a refused offer or a
    thread from before it recorded when."""


REFUSED_METADATA_KEY = "ag-ui-temporal:refused"
"""`InterruptSettled.metadata` key of an offer the thread refused, `{"code", "message"}`: the
server's own namespace, as `ag-ui-temporal:toolCall` and `ag-ui-temporal:approval` are. Threads
before patch `refusal-in-own-namespace` wrote `{"ag-ui": {"refused": code, "message": …}}`,
in AG-UI's reserved namespace (the protocol's, not a server's); owners parked since may
have heard that, so `offer_refusal` reads both."""


class OfferRefusal(BaseModel):
    """Why a thread refused an offer (its owner heard `cancelled`)."""

    code: str
    """`LIMIT_EXCEEDED` (the thread held `max_pending_interrupts` already) or `INVALID_OFFER`
    (a hand-made offer that is no valid interrupt)."""
    message: str = ""


def offer_refusal(settled: InterruptSettled) -> OfferRefusal | None:
    """Why the thread refused this offer; None for any other settlement. The key counts
    only on a `cancelled` that no run carried: a client's cancel always names its run, and
    may carry any key of ours in its metadata (only the `ag-ui` namespace is refused from
    clients)."""
    if settled.status != "cancelled" or settled.run_id is not None:
        return None
    metadata = settled.metadata or {}
    refused = metadata.get(REFUSED_METADATA_KEY)
    if isinstance(refused, dict) and isinstance(refused.get("code"), str):
        return OfferRefusal(code=refused["code"], message=str(refused.get("message") or ""))
    return None


class SettlementQuery(BaseModel):
    """Input of the `interrupt_settlement` query and the `agui_confirm_settled` activity."""

    interrupt_id: str
    owner_workflow_id: str
    """Who asks: the thread answers only about interrupts this workflow owns."""
    thread_id: str = ""
    """The thread the owner offered the interrupt to (the activity's input only)."""


class InterruptClaim(BaseModel):
    """Input of the `agui_interrupt_claim` update and the `agui_ask_owner` activity."""

    interrupt_id: str
    owner_workflow_id: str
    principal: str | None = None


class ThreadSignal(BaseModel):
    """Input of the `agui_signal_thread` activity: signal (starting if needed) a thread."""

    thread_id: str
    agent: str = "inbox"
    """The agent of the thread if this signal starts it."""
    signal: str
    arg: WireDict
    start: bool = True
    """Signal-with-start; False: signal only, and a missing thread is not an error."""
    thread_owner: str | None = None
    """The principal the thread belongs to if this signal starts it (`inbox:P`: always P)."""
