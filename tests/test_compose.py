"""docker-compose.yml is a valid Compose file (checked offline against the Compose spec)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from jsonschema import Draft7Validator

ROOT = Path(__file__).parent.parent


def test_compose_file_matches_the_compose_spec():
    schema = json.loads((Path(__file__).parent / "compose-spec.json").read_text())
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    errors = [e.message for e in Draft7Validator(schema).iter_errors(compose)]
    assert errors == []
    assert {"temporal", "worker", "gateway"} <= set(compose["services"])
