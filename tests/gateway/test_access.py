"""gateway.access: the one rule deciding who may see a thread on the gateway side."""

from __future__ import annotations

from gateway.access import may_see
from gateway.auth import Principal

ANN = Principal("ann", groups=("ops",))


def test_an_unowned_thread_is_anyones():
    assert may_see(ANN, None)
    assert may_see(Principal("bob"), None)


def test_an_owned_thread_is_its_owners_or_its_groups():
    assert may_see(ANN, "ann")
    assert may_see(ANN, "group:ops")
    assert not may_see(ANN, "bob")
    assert not may_see(ANN, "group:sales")


def test_a_principal_named_like_a_group_is_not_its_member():
    assert not may_see(Principal("group:ops"), "group:ops")


def test_a_thread_of_another_agent_is_not_seen_on_this_agents_url():
    assert may_see(ANN, "ann", agent="assistant", expected_agent="assistant")
    assert not may_see(ANN, "ann", agent="other", expected_agent="assistant")
    assert not may_see(ANN, None, agent=None, expected_agent="assistant")
