"""Run rejections as AG-UI events: `RUN_STARTED` + `RUN_ERROR` with a stable code.

Item-level problems are also written where TanStack's client shows them next to
the interrupt (`gateway.tanstack.interrupt_errors`).
"""

from __future__ import annotations

import json

from ag_ui.core import PROTOCOL_VERSION, RunAgentInput, RunErrorEvent, RunStartedEvent
from fastapi import Request, Response
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError

from ag_ui_temporal.gateway.tanstack import interrupt_errors_metadata
from ag_ui_temporal.workflows.contract import RunRejection, WireDict, wire


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
    metadata = interrupt_errors_metadata(
        body.thread_id, interrupted_run, rejection.interrupt_errors
    )
    error = RunErrorEvent(message=rejection.message, code=rejection.code, metadata=metadata)
    return [run_started(body), wire(error)]


async def invalid_request(request: Request, err: Exception) -> Response:
    """FastAPI's 422, escaped to ASCII: an echoed input may hold a lone surrogate
    (valid JSON, `"\\ud800"`), which UTF-8 cannot encode, and must not turn into a 500."""
    errors = err.errors() if isinstance(err, RequestValidationError) else []
    body = json.dumps({"detail": jsonable_encoder(errors)}, ensure_ascii=True)
    return Response(body, status_code=422, media_type="application/json")
