"""Who may see or act on a thread, decided here and only here on the gateway side.

The rule is the contract's (`workflows.contract.may_act`, which the workflow applies to
every run): a thread belongs to its owner (an owner `group:G` admits every member of G),
and a thread without one is anyone's. Running, joining, hydrating and the approvals API
ask `may_see`; whoever it refuses is answered as for a thread that does not exist (404,
an empty hydration) or, for a run, with `FORBIDDEN`.
"""

from __future__ import annotations

from gateway.auth import Principal
from workflows.contract import may_act


def may_see(
    principal: Principal,
    owner: str | None,
    *,
    agent: str | None = None,
    expected_agent: str | None = None,
) -> bool:
    """Whether `principal` may see a thread of `owner`; with `expected_agent` (the agent
    of the URL asked), only if the thread is that agent's (`agent`)."""
    if expected_agent is not None and agent != expected_agent:
        return False
    return may_act(owner, principal.name, principal.groups)
