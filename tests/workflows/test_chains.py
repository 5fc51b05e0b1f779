"""Approval chain definitions as people write them (YAML or JSON), without a server:
steps, groups, conditions, durations and the checks that refuse a broken definition."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from ag_ui_temporal.workflows.chains.definitions import ChainDefinition, ChainStep, condition_holds


def test_definition_from_yaml_and_json(tmp_path: Path):
    yaml_text = """
name: expense
groups: {finance: [carol, dave, erin]}
steps:
  - {name: manager, approvers: [bob], expires_in: 2d, remind_every: 12h,
     on_expiry: "escalate:dana"}
  - {name: finance, approvers: [finance], quorum: 2, expires_in: 30s, when: amount > 1000}
"""
    (tmp_path / "chain.yaml").write_text(yaml_text)
    definition = ChainDefinition.load(tmp_path / "chain.yaml")
    manager, finance = definition.steps
    assert (manager.on_expiry, manager.escalate_to) == ("escalate", "dana")
    assert manager.expires_in == timedelta(days=2) and finance.expires_in == timedelta(seconds=30)
    assert definition.principals(finance) == ["carol", "dave", "erin"]
    assert [s.name for s in definition.steps_for({"amount": 2400})] == ["manager", "finance"]
    assert [s.name for s in definition.steps_for({"amount": 300})] == ["manager"]
    (tmp_path / "chain.json").write_text(definition.model_dump_json())
    assert ChainDefinition.load(tmp_path / "chain.json") == definition
    assert condition_holds('currency == "EUR" and amount >= 10', {"currency": "EUR", "amount": 10})
    assert not condition_holds("amount > 1000", {})
    with pytest.raises(ValueError):
        ChainStep(name="x", approvers=["a"], on_expiry="escalate")
    with pytest.raises(ValueError):
        ChainDefinition(name="x", steps=[ChainStep(name="s", approvers=["a"], quorum=2)])
