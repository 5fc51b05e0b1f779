"""Standing decisions: a person's answer to a tool approval that also answers later calls.

An agent registered with `standing_approvals=` offers it: each of its `tool_call` approvals
takes, beside the answer, `"standing": {"args": "any" | "same", "expiresInSeconds": n}`
(in the approve and in the reject envelope of its `responseSchema`, so any AG-UI client
reads the offer off the schema). Such an answer decides the call, and from then on, in that
thread, every later call of the same tool (`"same"`: with the same arguments) until it
expires or is revoked: the thread answers those itself, as the person did, and records each
in the audit trail as answered `via` `"standing"` by that person.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

JsonSchema = dict[str, Any]

STANDING_KEY: Final = "standing"
"""The answer's property that asks for a standing decision (in either approval envelope)."""
STANDING_METADATA_KEY: Final = "ag-ui-temporal:standing"
"""Metadata key of an answer the thread gave from a standing decision (`{"id", "interruptId"}`:
the decision, and the interrupt whose answer made it), and of the `CUSTOM` event that tells a
client a call went ahead (or did not) on one."""
MIN_SECONDS: Final = 1
MAX_STANDING: Final = 50
"""Standing decisions a thread keeps; a new one past this replaces the oldest (whose calls
then ask again: never fewer questions than the person chose)."""
REVOKE_STANDING_UPDATE: Final = "revoke_standing"
UNKNOWN_STANDING: Final = "UNKNOWN_STANDING"
"""The `revoke_standing` update's refusal of an id the thread holds no decision under."""


def standing_schema(longest: timedelta) -> JsonSchema:
    """The `standing` property of an approval envelope: decisions up to `longest`."""
    return {
        "type": "object",
        "properties": {
            "args": {"enum": ["any", "same"]},
            "expiresInSeconds": {
                "type": "integer",
                "minimum": MIN_SECONDS,
                "maximum": int(longest.total_seconds()),
            },
        },
        "additionalProperties": False,
    }


def offered(response_schema: Any) -> int | None:
    """The longest standing decision (seconds) an approval's schema offers; None: none."""
    envelopes = response_schema.get("oneOf") if isinstance(response_schema, dict) else None
    for envelope in envelopes if isinstance(envelopes, list) else []:
        standing = _at(envelope, "properties", STANDING_KEY)
        longest = _at(standing, "properties", "expiresInSeconds", "maximum")
        if isinstance(longest, int):
            return longest
    return None


def _at(value: Any, *path: str) -> Any:
    """`value[path[0]][path[1]]...`, None where a step is no object (a schema of any shape)."""
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def checked_offer(longest: timedelta | None) -> timedelta | None:
    """A registration's `standing_approvals`, refused (`ValueError`) when under a second."""
    if longest is not None and longest.total_seconds() < MIN_SECONDS:
        raise ValueError(f"standing_approvals must be at least {MIN_SECONDS} s (or None)")
    return longest


class StandingRequest(BaseModel):
    """What an answer asks to stand for (its `standing`, checked by the schema)."""

    args: Literal["any", "same"] = "same"
    expires_in_seconds: int | None = None

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


def requested(payload: Any) -> StandingRequest | None:
    """The standing decision an approval's answer asks for, if any (None too for a `standing`
    of another shape: the property of some other interrupt's own schema)."""
    standing = payload.get(STANDING_KEY) if isinstance(payload, dict) else None
    try:
        return StandingRequest.model_validate(standing) if isinstance(standing, dict) else None
    except ValidationError:
        return None


class StandingDecision(BaseModel):
    """One standing decision of a thread, as the thread keeps it and the API lists it."""

    id: str
    tool: str
    args: Any = None
    """The arguments it covers (`args: "same"`); None: any arguments."""
    any_args: bool = False
    approved: bool
    answer: Any
    """The answer it gives each call it covers: the person's, less `standing`."""
    by: str | None
    """Who decided (None: a thread without principals)."""
    interrupt_id: str
    """The interrupt whose answer made it."""
    at: str
    expires_at: str
    revoked_at: str | None = None
    revoked_by: str | None = None
    """Who revoked it (None: a thread without principals, or not revoked). A revoked one stays
    in the thread only until the audit trail has its revocation."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    def stands(self, now: datetime) -> bool:
        """Whether it still answers calls at `now` (the one rule of its expiry)."""
        return self.revoked_at is None and datetime.fromisoformat(self.expires_at) > now

    def covers(self, tool: str, args: Any, now: datetime) -> bool:
        """Whether it answers a call of `tool` with `args` at `now`."""
        if tool != self.tool or not self.stands(now):
            return False
        return self.any_args or canonical(args) == canonical(self.args)


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class RevokeStanding(BaseModel):
    """Input of the `revoke_standing` update (the gateway decided who may)."""

    id: str
    principal: str | None = None


class StandingRevoked(BaseModel):
    """The `revoke_standing` update's answer: the decision that no longer stands."""

    decision: StandingDecision
