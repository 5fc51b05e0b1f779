"""The one way an AG-UI interrupt is built, by an agent (`Turn.ask`) or a producer
(`offer_in_thread`): the same id, the same `expiresAt` text, the same checks.

Replay-safe by construction: one `workflow.uuid4()` call per interrupt, made
first (before any check), as both callers always did; `expiresAt` is written as
both always wrote it (`iso`: milliseconds, UTC as `Z`).

`interrupt_problem` is the whole check of a finished wire dict: producers run it
before offering, and the thread runs it on every raw `offer_interrupt` signal.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final, Unpack

from temporalio import workflow

from ag_ui_temporal.workflows._common import iso, new_id
from ag_ui_temporal.workflows.schema import (
    INVALID_RESPONSE_SCHEMA,
    schema_problem,
)

with workflow.unsafe.imports_passed_through():
    from ag_ui.core import Interrupt
    from pydantic import ValidationError

    from ag_ui_temporal.workflows.contract import InterruptFields, WireDict

CORE_REASONS: Final = frozenset({"tool_call", "input_required", "confirmation"})
"""AG-UI's core reasons; any other reason is namespaced `<framework>:<name>`."""
RESERVED_FRAMEWORK: Final = "core"
"""The namespace of the core reasons: no custom reason may use it."""
CONFIRMATION_SCHEMA: Final = {"type": "boolean"}
"""What a `confirmation` asked without a schema expects: yes (`true`) or no (`false`)."""
UNBOUND_TOOL_CALL: Final = "a tool_call interrupt names the call it is about (toolCallId)"
NOT_AN_OBJECT: Final = "invalid responseSchema: AG-UI's responseSchema is a JSON object"
MAX_SUBAGENT_RUN_ID: Final = 256
"""The longest `subagentRunId` an interrupt may carry (it is an id, not a document)."""
INVALID_REASON: Final = "INVALID_REASON"
"""`ApplicationError.type` when a producer offers an interrupt whose reason breaks the taxonomy."""
INVALID_OFFER: Final = "INVALID_OFFER"
"""`ApplicationError.type` of any other offer that is no valid interrupt (and the `refused`
code its owner hears when a hand-made signal carried it to the thread)."""


class InvalidInterrupt(ValueError):
    """Not a valid AG-UI interrupt. In the thread (an agent's bug) the workflow task fails
    and a fixed deploy resumes the run; a producer raises a non-retryable `ApplicationError`
    of type `error_type`, so the mistake surfaces in its own workflow."""

    error_type: str = INVALID_OFFER


class InvalidResponseSchema(InvalidInterrupt):
    """The `responseSchema` is no valid 2020-12 schema object (or needs a regex RE2 cannot run)."""

    error_type = INVALID_RESPONSE_SCHEMA


class InvalidReason(InvalidInterrupt):
    """A reason outside the taxonomy: not core, not `<framework>:<name>`, or `core:...`."""

    error_type = INVALID_REASON


def reason_problem(reason: Any) -> str | None:
    """Why `reason` breaks AG-UI's reason taxonomy, or None."""
    if not isinstance(reason, str) or not reason:
        return "an interrupt needs a reason"
    if reason in CORE_REASONS:
        return None
    framework, _, name = reason.partition(":")
    if reason.startswith(f"{RESERVED_FRAMEWORK}:"):
        return f"reason {reason[:100]!r}: the {RESERVED_FRAMEWORK}: namespace is AG-UI's own"
    if reason.count(":") != 1 or not framework or not name:
        core = ", ".join(sorted(CORE_REASONS))
        return f"reason {reason[:100]!r} is neither core ({core}) nor namespaced <framework>:<name>"
    return None


def subagent_problem(subagent_run_id: Any) -> str | None:
    """Why `subagent_run_id` is no run id of a sub-agent, or None."""
    if not isinstance(subagent_run_id, str) or not subagent_run_id.strip():
        return "subagentRunId must be a non-empty string"
    if len(subagent_run_id) > MAX_SUBAGENT_RUN_ID:
        return f"subagentRunId is longer than {MAX_SUBAGENT_RUN_ID} characters"
    return None


def new_interrupt(
    *,
    reason: str,
    message: str,
    expires_at: datetime | None = None,
    **fields: Unpack[InterruptFields],
) -> WireDict:
    """An AG-UI `Interrupt` wire dict with a fresh `int-...` id; raises `InvalidInterrupt`.
    `fields`: as the contract lists them (`InterruptFields`)."""
    interrupt: WireDict = {"id": new_id("int"), "reason": reason, "message": message}
    response_schema = fields.get("response_schema")
    tool_call_id, subagent_run_id = fields.get("tool_call_id"), fields.get("subagent_run_id")
    metadata = fields.get("metadata")
    if (problem := reason_problem(reason)) is not None:
        raise InvalidReason(problem)
    if subagent_run_id is not None:
        interrupt["subagentRunId"] = _checked_subagent(subagent_run_id)
    if tool_call_id is not None:
        interrupt["toolCallId"] = tool_call_id
    _check_bound(reason, tool_call_id)
    if response_schema is None and reason == "confirmation":
        response_schema = dict(CONFIRMATION_SCHEMA)
    if response_schema is not None:
        if (problem := _schema_problem(response_schema)) is not None:
            raise InvalidResponseSchema(problem)
        interrupt["responseSchema"] = response_schema
    if metadata:
        interrupt["metadata"] = metadata
    if expires_at is not None:
        interrupt["expiresAt"] = _expires(expires_at)
    return interrupt


def _expires(expires_at: datetime) -> str:
    if expires_at.tzinfo is None:
        raise InvalidInterrupt("expiresAt needs a timezone (a naive datetime is no instant)")
    return iso(expires_at)


def interrupt_problem(interrupt: Any) -> InvalidInterrupt | None:
    """Why `interrupt` (a wire dict from a producer) cannot be delivered to a client, or None.

    Pure: the thread calls it on every raw offer it receives."""
    if not isinstance(interrupt, dict):
        return InvalidInterrupt("an interrupt is a JSON object")
    if not isinstance(interrupt.get("responseSchema", {}), dict):
        return InvalidResponseSchema(NOT_AN_OBJECT)
    try:
        wire = Interrupt.model_validate(interrupt).model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "interrupt"
        return InvalidInterrupt(f"not an AG-UI Interrupt: {where}: {first['msg']}")
    if misnamed := sorted(key for key in wire if key not in interrupt):
        return InvalidInterrupt(f"interrupt keys are camelCase on the wire: {misnamed}")
    if not wire["id"]:
        return InvalidInterrupt("an interrupt needs an id")
    if (problem := reason_problem(wire["reason"])) is not None:
        return InvalidReason(problem)
    if not (wire.get("message") or "").strip():
        return InvalidInterrupt("an offered interrupt needs a message for whoever answers")
    if "responseSchema" in wire and (problem := schema_problem(wire["responseSchema"])):
        return InvalidResponseSchema(problem)
    return _companion_problem(interrupt, wire) or _expiry_problem(wire.get("expiresAt"))


def _companion_problem(interrupt: WireDict, wire: WireDict) -> InvalidInterrupt | None:
    """A bad `subagentRunId`, or a `tool_call` bound to no call."""
    if "subagentRunId" in interrupt and (problem := subagent_problem(interrupt["subagentRunId"])):
        return InvalidInterrupt(problem)
    if wire["reason"] == "tool_call" and not wire.get("toolCallId"):
        return InvalidInterrupt(UNBOUND_TOOL_CALL)
    return None


def _check_bound(reason: str, tool_call_id: str | None) -> None:
    """AG-UI: a `tool_call` interrupt's `toolCallId` must be set."""
    if reason == "tool_call" and not tool_call_id:
        raise InvalidInterrupt(UNBOUND_TOOL_CALL)


def _checked_subagent(subagent_run_id: str) -> str:
    if (problem := subagent_problem(subagent_run_id)) is not None:
        raise InvalidInterrupt(problem)
    return subagent_run_id


def _expiry_problem(expires_at: str | None) -> InvalidInterrupt | None:
    if expires_at is None:
        return None
    try:
        instant = datetime.fromisoformat(expires_at)
    except ValueError:
        return InvalidInterrupt(f"expiresAt {expires_at[:64]!r} is no ISO 8601 instant")
    if instant.tzinfo is None:
        return InvalidInterrupt(f"expiresAt {expires_at[:64]!r} has no timezone")
    return None


def _schema_problem(schema: Any) -> str | None:
    if not isinstance(schema, dict):
        return NOT_AN_OBJECT
    return schema_problem(schema)
