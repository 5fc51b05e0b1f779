"""The tests' audit key, and audit trails made by hand as export lines: with the times a test
needs (an import keeps `recordedAt`, which a record's hash covers), or forged by someone
without the key."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from ag_ui_temporal.store import GENESIS, AuditKey, AuditKeys, record_hash

TEST_AUDIT_KEY = "the tests' audit key, never a deployment's"
"""`AUDIT_KEY` of the tests' stacks on PostgreSQL (one on SQLite keys its trail with the
development key under its `DATA_DIR`), and of the `AuditLog`s tests open themselves."""
AUDIT_KEYS = AuditKeys.of(TEST_AUDIT_KEY)


def trail_lines(
    scope: str,
    recorded: Sequence[datetime],
    *,
    audit_key: AuditKey | None = AUDIT_KEYS.current,
    start: int = 1,
    prev: str = GENESIS,
    **fields: Any,
) -> list[dict[str, Any]]:
    """A trail of `scope` as an export's lines, one record a time in `recorded`, from seq
    `start` after `prev`, hashed under `audit_key` (None: unkeyed, a plain SHA-256, as
    anyone can); `fields` replace a record's."""
    lines = []
    for seq, at in enumerate(recorded, start):
        line: dict[str, Any] = {
            "scope": scope, "seq": seq, "key": f"{scope}#{seq}", "kind": "asked",
            "at": "2026-12-01T10:00:00+00:00", "threadId": None, "chainId": None,
            "interruptId": f"int-{seq}", "runId": None, "principal": "alice",
            "data": {"n": seq}, "prev": prev, "keyId": audit_key and audit_key.id, "hash": "",
            "recordedAt": at.astimezone(UTC).isoformat(),
        }  # fmt: skip
        line.update(fields)
        line["hash"] = prev = record_hash(line, audit_key)
        lines.append(line)
    return lines
