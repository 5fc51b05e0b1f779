"""Who may see or act on a thread, and who may answer an interrupt: the one rule.

A thread's owner is a principal or `group:G`; an `inbox:P` thread is P's whoever
started it. The workflow (run validator and handler, queries) and the gateway
apply these functions and nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence

GROUP_PREFIX = "group:"
"""An `allowed_resolvers` (or thread owner) entry `group:G` admits every member of group G."""
INBOX_PREFIX = "inbox:"

OTHER_OWNER = "the thread belongs to another principal"
"""The refusal (`FORBIDDEN`) a run gets on a thread it may not act on."""


def natural_owner(thread_id: str) -> str | None:
    """`inbox:P` belongs to P whoever starts it (no one can squat another's inbox)."""
    return thread_id.removeprefix(INBOX_PREFIX) if thread_id.startswith(INBOX_PREFIX) else None


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


def may_act(owner: str | None, principal: str | None, groups: Sequence[str]) -> bool:
    """Whether `principal` may run, join or read a thread owned by `owner` (None: anyone)."""
    return owner is None or admits([owner], principal, groups)


def may_answer(
    allowed_resolvers: Sequence[str] | None, principal: str | None, groups: Sequence[str]
) -> bool:
    """Whether `principal` may answer an interrupt limited to `allowed_resolvers` (None: anyone
    who may act on the thread)."""
    return allowed_resolvers is None or admits(allowed_resolvers, principal, groups)
