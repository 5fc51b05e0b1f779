"""A notice's key is its delivery workflow's id and its webhook id: readable while short, and
always short enough for both, however long the ids that make it."""

from __future__ import annotations

from ag_ui_temporal.workflows.contract.names import MAX_KEY_BYTES
from ag_ui_temporal.workflows.contract.notices import notice_key, notification_workflow_id


def test_a_short_key_reads_as_what_it_is_made_of():
    assert notice_key("int-1", "bob", "reminder", "2") == "int-1:bob:reminder:2"


def test_a_key_of_long_ids_is_hashed_to_fit_a_workflow_id():
    principal = "é" * 990  # a JWT subject may be long; its key must still start a workflow
    key = notice_key("int-" + "x" * 250, principal, "waiting")
    assert key.startswith("sha256-") and len(key.encode()) <= MAX_KEY_BYTES
    assert len(notification_workflow_id(key).encode()) < 1000
    assert key == notice_key("int-" + "x" * 250, principal, "waiting")  # the same every time
    assert key != notice_key("int-" + "x" * 250, principal, "reminder")
