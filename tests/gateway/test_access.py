"""ag_ui_temporal.gateway.access: the one rule deciding who may see a thread on the gateway side."""

from __future__ import annotations

from ag_ui_temporal.gateway.access import is_admin, may_see, start_refusal
from ag_ui_temporal.gateway.auth import Principal
from ag_ui_temporal.settings import Settings

ANN = Principal("ann", groups=("ops",))


def test_an_unowned_thread_is_the_admins_only():
    assert not may_see(ANN, None)
    assert not may_see(Principal("bob"), None)
    assert may_see(ANN, None, admin=True)
    assert not may_see(ANN, "bob", admin=True)  # an admin's reach ends at owned threads


def test_admins_are_named_by_thread_admins_or_are_the_one_user_of_none():
    admins = Settings(thread_admins=["root", "group:ops"])
    assert is_admin(ANN, admins) and is_admin(Principal("root"), admins)
    assert not is_admin(Principal("bob"), admins)
    assert not is_admin(Principal("group:ops"), admins)
    assert not is_admin(ANN, Settings(thread_admins=[]))
    assert is_admin(Principal("anonymous"), Settings(thread_admins=[], auth_mode="none"))


def test_an_inbox_id_is_refused_to_others_and_other_agents_before_anything_starts():
    assert start_refusal("inbox:ann", "inbox", ANN) is None
    assert start_refusal("inbox:group:ops", "inbox", ANN) is None
    assert start_refusal("t-1", "assistant", ANN) is None
    squat = start_refusal("inbox:bob", "inbox", ANN)
    assert squat is not None and squat.code == "FORBIDDEN"
    other = start_refusal("inbox:bob", "assistant", ANN)  # the owner first: as the thread does
    assert other is not None and other.code == "FORBIDDEN"
    agent = start_refusal("inbox:ann", "assistant", ANN)
    assert agent is not None and agent.code == "AGENT_MISMATCH"


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
