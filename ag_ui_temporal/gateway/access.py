"""Who may see a thread, decided here and only here on the gateway side.

The rule is the contract's (`workflows.contract.may_act`, which the workflow applies to
every run): a thread belongs to its owner (an owner `group:G` admits every member of G),
and a thread without one to the admins only (`THREAD_ADMINS`; with `AUTH_MODE=none`, its
one user). Whoever the rule refuses is answered exactly as for a thread that does not exist
(an empty hydration, a join's 404, a resume's `UNKNOWN_INTERRUPT_ID`), and at the same cost:
`thread_access` decides from the thread's memo (`describe`, which a missing thread answers
as fast and no worker is needed for) before anything asks the thread itself.
"""

from __future__ import annotations

from collections import OrderedDict
from enum import Enum
from typing import Any

from temporalio.client import WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode

from ag_ui_temporal.gateway.auth import Principal
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import (
    INBOX_AGENT,
    OTHER_OWNER,
    ErrorCode,
    RunRejection,
    ThreadMemo,
    effective_owner,
    may_act,
    natural_agent,
    natural_owner,
    read_thread_memo,
)

TRUSTED_MODES = ("none",)
"""Modes whose one (anonymous) user is an admin of everything (owner-less threads, anyone's
approvals, the whole audit trail): there is nobody else to keep out. In `dev` the UI sends
the chosen principal as `X-Principal`, so the usual checks hold there."""


def is_admin(principal: Principal, settings: Settings) -> bool:
    """Whether `principal` may act on threads without an owner (`THREAD_ADMINS`)."""
    return settings.auth_mode in TRUSTED_MODES or principal.named_in(settings.thread_admins)


def may_see(
    principal: Principal,
    owner: str | None,
    *,
    admin: bool = False,
    agent: str | None = None,
    expected_agent: str | None = None,
) -> bool:
    """Whether `principal` (an admin or not) may see a thread of `owner`; with
    `expected_agent` (the agent of the URL asked), only if the thread is that agent's."""
    if expected_agent is not None and agent != expected_agent:
        return False
    return may_act(owner, principal.name, principal.groups, admin)


class Seen(Enum):
    """What the thread's memo says about a principal's access."""

    YES = "yes"
    NO = "no"
    """Not the principal's, or no such thread: the same answer, at the same cost."""
    ASK = "ask"
    """A thread started before the memo: only the thread's own answer (a query) tells."""


MISSING = (RPCStatusCode.NOT_FOUND, RPCStatusCode.INVALID_ARGUMENT)
"""`describe` answers: no such workflow (an id the server refuses cannot name one either)."""


MEMOS_KEPT = 10_000
"""Threads' memos this process keeps (the newest read), so their owners skip the describe."""
_memos: OrderedDict[str, ThreadMemo] = OrderedDict()


async def thread_access(
    handle: WorkflowHandle[Any, Any],
    thread_id: str,
    principal: Principal,
    admin: bool,
    expected_agent: str | None = None,
) -> Seen:
    """Whether `principal` may see thread `thread_id` (`handle`'s), from its memo alone.

    A memo never changes, so one read before that admits `principal` is taken as it is (an
    owner's next resume costs no describe). Whoever it does not admit is decided by a new
    `describe` every time: a refusal costs the same whatever this process has seen. (The
    thread still applies the rule itself: a thread id started again is no risk.)"""
    memo = _memos.get(handle.id)
    if memo is not None and _admits(memo, thread_id, principal, admin, expected_agent):
        _memos.move_to_end(handle.id)
        return Seen.YES
    try:
        description = await handle.describe()
    except RPCError as err:
        if err.status in MISSING:
            return Seen.NO
        raise
    memo = read_thread_memo(await description.memo())
    if memo is None:
        return Seen.ASK
    _memos[handle.id] = memo
    while len(_memos) > MEMOS_KEPT:
        _memos.popitem(last=False)
    return Seen.YES if _admits(memo, thread_id, principal, admin, expected_agent) else Seen.NO


def _admits(
    memo: ThreadMemo, thread_id: str, principal: Principal, admin: bool, agent: str | None
) -> bool:
    owner = effective_owner(memo.owner, thread_id)
    return may_see(principal, owner, admin=admin, agent=memo.agent, expected_agent=agent)


def start_refusal(thread_id: str, agent: str, principal: Principal) -> RunRejection | None:
    """Why a run must not start thread `thread_id` whether or not it exists, decided from the
    id alone (no Temporal call, so a refused caller leaves nothing behind): `inbox:P` is
    P's and the inbox agent's."""
    owner = natural_owner(thread_id)
    if owner is not None and not may_act(owner, principal.name, principal.groups):
        return RunRejection(code=ErrorCode.FORBIDDEN, message=OTHER_OWNER)
    if natural_agent(thread_id) not in (None, agent):
        message = f"thread belongs to agent {INBOX_AGENT!r}"
        return RunRejection(code=ErrorCode.AGENT_MISMATCH, message=message)
    return None
