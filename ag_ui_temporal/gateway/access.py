"""Who may see a thread, decided here and only here on the gateway side.

The rule is the contract's (`workflows.contract.may_act`, which the workflow applies to
every run): a thread belongs to its owner (an owner `group:G` admits every member of G),
and a thread without one to the admins only (`THREAD_ADMINS`; with `AUTH_MODE=none`, its
one user). Whoever the rule refuses is answered exactly as for a thread that does not exist
(an empty hydration, a join's 404, a resume's `UNKNOWN_INTERRUPT_ID`), and at the same cost:
`Access.decide` decides from the thread's memo (`describe`, which a missing thread answers
as fast and no worker is needed for) before anything asks the thread itself.

A request makes one `Access` and asks it everything: it describes the thread once at most
(none when this process read the memo before, or saw a run of the thread end: `Access.told`),
and what the thread later tells of its owner (its view, a run's log or result) is judged by
`Access.sees`, which takes the memo's verdict for the owner the memo named, and applies the
rule where the memo did not decide (a thread from before the memo, a run sent without a
describe: a new thread's, a join).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from enum import Enum
from typing import Any

from temporalio.client import WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode

from ag_ui_temporal.gateway.auth import Principal
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import (
    INBOX_AGENT,
    OTHER_OWNER,
    THREAD_QUERY,
    ErrorCode,
    RunRejection,
    ThreadView,
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


@dataclass(frozen=True)
class _Known:
    """What this process knows of a thread's memo: its owner (the memo's, or the effective
    one a run's result named: the same to the rule), and its agent (None: a run's result told
    the owner only, and a request about one agent's thread describes it)."""

    owner: str | None
    agent: str | None


_memos: OrderedDict[str, _Known] = OrderedDict()


@dataclass
class Access:
    """One request's access to a thread: `principal` (an admin or not) on `expected_agent`'s
    URL (None: any agent's; the thread refuses a run of another agent itself)."""

    principal: Principal
    admin: bool
    expected_agent: str | None = None
    seen: Seen | None = None
    """What the thread's memo said (None: not read; `decide` reads it once)."""
    admitted: tuple[str | None, str | None] | None = None
    """The effective owner and agent of the memo that admitted the principal."""

    async def decide(self, handle: WorkflowHandle[Any, Any], thread_id: str) -> Seen:
        """Whether the principal may see thread `thread_id` (`handle`'s), from its memo alone;
        the first call decides, later ones answer the same.

        A memo never changes, so one read before that admits the principal is taken as it is
        (an owner's next resume costs no describe). Whoever it does not admit is decided by a
        new `describe` every time: a refusal costs the same whatever this process has seen."""
        if self.seen is None:
            memo = _memos.get(handle.id)
            if memo is not None and self._admits(memo, thread_id):
                _memos.move_to_end(handle.id)
                self.seen = Seen.YES
            else:
                self.seen = await self._described(handle, thread_id)
        return self.seen

    def sees(self, owner: str | None, agent: str | None = None) -> bool:
        """Whether the principal may see what the thread told of itself (its view, a run's
        log or result): owned by `owner` (the effective owner), of `agent` (None: untold).
        The memo's verdict stands for the owner and agent it named; anything else (no memo
        read, or a thread started anew under the id since this process read it) is decided
        by the rule. (The thread still applies the rule to every run itself.)"""
        if self.seen is Seen.YES and self.admitted is not None:
            if owner == self.admitted[0] and agent in (None, self.admitted[1]):
                return True
        expected = self.expected_agent
        return may_see(
            self.principal, owner, admin=self.admin, agent=agent, expected_agent=expected
        )

    async def view(self, handle: WorkflowHandle[Any, Any], thread_id: str) -> ThreadView | None:
        """The thread's view (the `thread` query) if the principal may see it; None for a thread
        that is not theirs (no query asked) or that does not exist. Raises what describing
        and querying raise otherwise."""
        if await self.decide(handle, thread_id) is Seen.NO:
            return None
        try:
            thread: ThreadView = await handle.query(THREAD_QUERY, result_type=ThreadView)
        except RPCError as err:
            if err.status != RPCStatusCode.NOT_FOUND:
                raise
            return None  # an unknown thread is an empty one
        # threads older than the memo are decided here
        return thread if self.sees(thread.effective_owner, thread.agent) else None

    async def _described(self, handle: WorkflowHandle[Any, Any], thread_id: str) -> Seen:
        try:
            description = await handle.describe()
        except RPCError as err:
            if err.status in MISSING:
                return Seen.NO
            raise
        memo = read_thread_memo(await description.memo())
        if memo is None:
            return Seen.ASK
        known = _Known(memo.owner, memo.agent)
        _keep(handle.id, known)
        return Seen.YES if self._admits(known, thread_id) else Seen.NO

    def told(self, workflow_id: str, thread_id: str, owner: str | None) -> None:
        """The effective owner a thread named in a run's result: as good as its memo's, which
        never changes, so the owner's next run on the thread (the resume of what the run
        asked) needs no describe. Not its agent: a repeated POST is answered from the stored
        result under any agent's URL."""
        known = _memos.get(workflow_id)
        if known is not None and effective_owner(known.owner, thread_id) == owner:
            _memos.move_to_end(workflow_id)  # a memo read before: it knows the agent too
            return
        _keep(workflow_id, _Known(owner, None))

    def _admits(self, memo: _Known, thread_id: str) -> bool:
        owner = effective_owner(memo.owner, thread_id)
        expected = self.expected_agent
        if not may_see(
            self.principal, owner, admin=self.admin, agent=memo.agent, expected_agent=expected
        ):
            return False
        self.admitted = (owner, memo.agent)
        return True


def _keep(workflow_id: str, memo: _Known) -> None:
    _memos[workflow_id] = memo
    _memos.move_to_end(workflow_id)
    while len(_memos) > MEMOS_KEPT:
        _memos.popitem(last=False)


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
