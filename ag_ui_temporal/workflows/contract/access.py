"""Who may see or act on a thread, and who may answer an interrupt: the one rule.

A thread's owner is a principal or `group:G`; an `inbox:P` thread is P's (and the inbox
agent's) whoever started it. A thread without an owner (a producer's thread started
without `thread_owner=`, a thread older than owners) is no one's: only an admin (the
gateway's `THREAD_ADMINS`) may see or act on it. The workflow (run validator and handler,
queries) and the gateway apply these functions and nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

GROUP_PREFIX = "group:"
"""An `allowed_resolvers` (or thread owner) entry `group:G` admits every member of group G."""
INBOX_PREFIX = "inbox:"
INBOX_AGENT = "inbox"
"""The agent every `inbox:P` thread belongs to."""

OTHER_OWNER = "the thread belongs to another principal"
"""The refusal (`FORBIDDEN`) a run gets on a thread it may not act on."""


def natural_owner(thread_id: str) -> str | None:
    """`inbox:P` belongs to P whoever starts it (no one can squat another's inbox)."""
    return thread_id.removeprefix(INBOX_PREFIX) if thread_id.startswith(INBOX_PREFIX) else None


def natural_agent(thread_id: str) -> str | None:
    """`inbox:P` is the inbox agent's whoever starts it (None: any agent's)."""
    return INBOX_AGENT if thread_id.startswith(INBOX_PREFIX) else None


def effective_owner(owner: str | None, thread_id: str) -> str | None:
    """The owner a thread answers to: the recorded one, else its natural one (None: unowned)."""
    return owner or natural_owner(thread_id)


def admits(entries: Sequence[str], principal: str | None, groups: Sequence[str]) -> bool:
    """Whether `principal` (member of `groups`) is named by `entries`: by name, or by a
    `group:G` entry. A principal literally named `group:G` matches no group entry."""
    if principal is None:
        return False
    for entry in entries:
        if entry.startswith(GROUP_PREFIX):
            if entry.removeprefix(GROUP_PREFIX) in groups:
                return True
        elif entry == principal:
            return True
    return False


def may_act(
    owner: str | None, principal: str | None, groups: Sequence[str], admin: bool = False
) -> bool:
    """Whether `principal` may run, join or read a thread owned by `owner`: its owner (for
    `group:G`, G's members); a thread without an owner (None) only an `admin`. Fails closed:
    nobody names who may see a thread, so nobody but an admin does."""
    if owner is None:
        return admin
    return admits([owner], principal, groups)


def may_stop(sent_by: str | None, principal: str | None, admin: bool = False) -> bool:
    """Whether `principal`, who may act on the thread (`may_act`), may stop a run that
    `sent_by` sent: its sender, or an admin (`THREAD_ADMINS`); another member of the owning
    group may not. A run whose sender is not known (the thread's own runs, records from
    before runs named it) is stopped by whoever may act on the thread."""
    return sent_by is None or admin or principal == sent_by


def may_answer(
    allowed_resolvers: Sequence[str] | None, principal: str | None, groups: Sequence[str]
) -> bool:
    """Whether `principal` may answer an interrupt limited to `allowed_resolvers` (None: anyone
    who may act on the thread)."""
    return allowed_resolvers is None or admits(allowed_resolvers, principal, groups)


THREAD_MEMO_KEY = "agui-thread"
"""The thread workflow's memo entry (`ThreadMemo`), written when the thread starts."""


class ThreadMemo(BaseModel):
    """Who a thread belongs to, in its workflow's memo: `describe` reads it without a worker,
    so access is decided at the same cost for a thread that exists and one that does not.
    The memo outlives continue-as-new; threads started before it have none."""

    owner: str | None
    """The owner the thread started with (natural for `inbox:P`; None: unowned)."""
    agent: str


def thread_memo(owner: str | None, agent: str) -> dict[str, Any]:
    """The memo a thread starts with (`memo=` of every start: gateway and producers)."""
    return {THREAD_MEMO_KEY: ThreadMemo(owner=owner, agent=agent).model_dump()}


def read_thread_memo(memo: Mapping[str, Any]) -> ThreadMemo | None:
    """The thread's memo entry (None: a thread started before it, or not a thread)."""
    try:
        return ThreadMemo.model_validate(memo.get(THREAD_MEMO_KEY))
    except ValidationError:
        return None
