"""The one way an AG-UI interrupt is built, by an agent (`Turn.ask`) or a producer
(`offer_in_thread`): the same id, the same `expiresAt` text, the same schema check.

Replay-safe by construction: one `workflow.uuid4()` call per interrupt, made
first (before any check), as both callers always did; `expiresAt` is written as
both always wrote it (`iso`: milliseconds, UTC as `Z`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from temporalio import workflow

from workflows._common import iso, new_id
from workflows._schema import schema_problem

with workflow.unsafe.imports_passed_through():
    from workflows.contract import WireDict


class InvalidResponseSchema(ValueError):
    """The `responseSchema` is no valid 2020-12 schema (or needs a regex RE2 cannot run).

    Raised as is in the thread (a bug in the agent: the workflow task fails and a fixed
    deploy resumes the run); a producer turns it into a non-retryable `ApplicationError`
    of type `INVALID_RESPONSE_SCHEMA`, so the mistake surfaces in its own workflow."""


def new_interrupt(
    *,
    reason: str,
    message: str,
    response_schema: dict[str, Any] | None = None,
    tool_call_id: str | None = None,
    metadata: WireDict | None = None,
    expires_at: datetime | None = None,
) -> WireDict:
    """An AG-UI `Interrupt` wire dict with a fresh `int-...` id."""
    interrupt: WireDict = {"id": new_id("int"), "reason": reason, "message": message}
    if tool_call_id is not None:
        interrupt["toolCallId"] = tool_call_id
    if response_schema is not None:
        if (problem := schema_problem(response_schema)) is not None:
            raise InvalidResponseSchema(problem)
        interrupt["responseSchema"] = response_schema
    if metadata:
        interrupt["metadata"] = metadata
    if expires_at is not None:
        interrupt["expiresAt"] = iso(expires_at)
    return interrupt
