"""Run rejections as AG-UI events: `RUN_STARTED` + `RUN_ERROR` with a stable code.

Item-level problems are also written where TanStack's client shows them next to
the interrupt (`metadata.tanstack.interruptErrors`), in TanStack's own codes.
"""

from __future__ import annotations

import json

from ag_ui.core import PROTOCOL_VERSION, RunAgentInput, RunErrorEvent, RunStartedEvent
from fastapi import Request, Response
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel

from ag_ui_temporal.workflows.contract import ErrorCode, InterruptError, RunRejection, WireDict

TANSTACK_CODES: dict[ErrorCode, str] = {
    ErrorCode.UNKNOWN_INTERRUPT_ID: "unknown-interrupt",
    ErrorCode.INVALID_PAYLOAD: "invalid-payload",
    ErrorCode.INTERRUPT_EXPIRED: "expired",
    ErrorCode.INTERRUPT_ALREADY_RESOLVED: "conflict",
    ErrorCode.PARTIAL_RESUME: "incomplete-batch",
    ErrorCode.RESUME_REQUIRED: "incomplete-batch",
    ErrorCode.INTERRUPT_WITHDRAWN: "stale",
    ErrorCode.FORBIDDEN: "conflict",  # TanStack has no auth code: not yours to answer
    ErrorCode.INVALID_RESUME: "invalid-payload",  # an entry TanStack must not send (reserved keys)
    ErrorCode.LIMIT_EXCEEDED: "server",  # the server's limit, not the client's answer
}
"""AG-UI code -> TanStack `interruptErrors` code; codes missing here map to `protocol`."""


def wire(model: BaseModel) -> WireDict:
    return model.model_dump(mode="json", by_alias=True)


def run_started(body: RunAgentInput) -> WireDict:
    return wire(
        RunStartedEvent(
            thread_id=body.thread_id,
            run_id=body.run_id,
            parent_run_id=body.parent_run_id,
            protocol_version=PROTOCOL_VERSION,
        )
    )


def rejection_events(body: RunAgentInput, rejection: RunRejection) -> list[WireDict]:
    """What the client sees for a refused run; the thread was not changed."""
    interrupted_run = rejection.interrupted_run_id or body.parent_run_id or body.run_id
    errors = [
        _tanstack_error(body.thread_id, interrupted_run, e) for e in rejection.interrupt_errors
    ]
    metadata = {"tanstack": {"interruptErrors": errors}} if errors else None
    error = RunErrorEvent(message=rejection.message, code=rejection.code, metadata=metadata)
    return [run_started(body), wire(error)]


def _tanstack_error(thread_id: str, interrupted_run: str, error: InterruptError) -> WireDict:
    code = TANSTACK_CODES.get(error.code, "protocol")
    item: WireDict = {
        "scope": error.scope,
        "threadId": thread_id,
        "interruptedRunId": interrupted_run,
        "generation": 0,
        "code": code,
        "message": error.message,
        "source": "server",
        "retryable": error.code
        not in (
            ErrorCode.INTERRUPT_EXPIRED,
            ErrorCode.INTERRUPT_WITHDRAWN,
            ErrorCode.FORBIDDEN,
            ErrorCode.LIMIT_EXCEEDED,
        ),
    }
    if error.scope == "item":
        item["interruptId"] = error.interrupt_id
    else:
        item["interruptIds"] = error.interrupt_ids or []
    return item


async def invalid_request(request: Request, err: Exception) -> Response:
    """FastAPI's 422, escaped to ASCII: an echoed input may hold a lone surrogate
    (valid JSON, `"\\ud800"`), which UTF-8 cannot encode, and must not turn into a 500."""
    errors = err.errors() if isinstance(err, RequestValidationError) else []
    body = json.dumps({"detail": jsonable_encoder(errors)}, ensure_ascii=True)
    return Response(body, status_code=422, media_type="application/json")
