"""The decision API: `POST /interrupts/{interruptId}` (authenticated), one answer to one
interrupt, as JSON; what programs, the CLI and the web inbox's task list send. Refusals are
`{"code", "message"}` with the status `gateway.decisions.HTTP_STATUS` gives. Decision links
(the same decision from a notification) are `gateway.routes.links`.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Final, Literal

from ag_ui.core import ResumeEntry, RunAgentInput
from fastapi import APIRouter, Body, Path
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from ag_ui_temporal.gateway.decisions import (
    DecisionRefused,
    decide,
)
from ag_ui_temporal.gateway.deps import (
    AuthenticatedRoute,
    ClientDep,
    PrincipalDep,
    RunIdKeyDep,
    SettingsDep,
    TranscriptDep,
)
from ag_ui_temporal.gateway.input_limits import METADATA_NULL, input_problem
from ag_ui_temporal.gateway.limits import RunQuotaDep
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import (
    ErrorCode,
    reserved_metadata_keys,
)
from ag_ui_temporal.workflows.contract.chains import inbox_thread

router = APIRouter(tags=["decisions"], route_class=AuthenticatedRoute)


# -- the decision API ---------------------------------------------------------------


class DecisionCreate(BaseModel):
    """One answer to one interrupt."""

    model_config = ConfigDict(extra="forbid")

    threadId: str | None = Field(None, min_length=1)
    """The interrupt's thread (default: the caller's inbox, `inbox:<caller>`)."""
    status: Literal["resolved", "cancelled"]
    payload: Any = None
    """The answer, as the interrupt's `responseSchema` asks (a cancel sends none)."""
    metadata: dict[str, Any] | None = None
    """Sent along with the answer: an object or left out (`null` is refused, as in an AG-UI
    resume; so are keys in the reserved `ag-ui` namespace)."""
    via: Literal["api", "cli"] = "api"
    """How the audit trail says the decision came: `cli` from `ag-ui-temporal approvals` (the
    caller's own word, as a User-Agent is; links and chats are the gateway's to say)."""


class DecisionPublic(BaseModel):
    """A decision the thread took."""

    interruptId: str
    threadId: str
    status: str
    runId: str
    """The run that carried it."""
    replayed: bool
    """The same decision had been taken before: this one changed nothing."""


class Refusal(BaseModel):
    """Why a decision was not taken (nothing changed)."""

    code: str
    message: str


REFUSALS: Final[dict[int | str, dict[str, Any]]] = {
    403: {"model": Refusal, "description": "The caller may not answer this interrupt"},
    404: {"model": Refusal, "description": "No such interrupt (or not the caller's to see)"},
    409: {"model": Refusal, "description": "The interrupt no longer takes this answer"},
    # FastAPI's own 422 (the body's shape) and the app's 503s answer `{"detail"}`: these two
    # statuses carry either body
    422: {"description": "The answer is wrong: `{code, message}`, or the body's `{detail}`"},
    503: {"description": "Temporal did not answer: send the same decision again"},
}


def refusal(code: str, message: str, status: int) -> JSONResponse:
    return JSONResponse({"code": code, "message": message}, status_code=status)


@router.post("/interrupts/{interruptId}", response_model=DecisionPublic, responses=REFUSALS)
async def post_interrupt_decision(
    interrupt_id: Annotated[str, Path(alias="interruptId", min_length=1)],
    _quota: RunQuotaDep,  # a decision is a run
    body: Annotated[DecisionCreate, Body()],
    principal: PrincipalDep,
    client: ClientDep,
    settings: SettingsDep,
    transcript: TranscriptDep,
    run_ids: RunIdKeyDep,
) -> DecisionPublic | JSONResponse:
    """Answer one interrupt (resolve or cancel) as the caller: the thread applies every rule
    an AG-UI resume meets. The same decision sent again answers the same (`replayed`)."""
    thread_id = body.threadId or inbox_thread(principal.name)
    has_payload = "payload" in body.model_fields_set
    if (problem := _body_problem(interrupt_id, thread_id, body, has_payload, settings)) is not None:
        return refusal(*problem, 422)
    try:
        decided = await decide(
            client,
            settings,
            principal,
            thread_id,
            interrupt_id,
            body.status,
            body.payload,
            has_payload,
            body.metadata,
            body.via,
            run_ids=run_ids,
            transcript=transcript,
        )
    except DecisionRefused as refused:
        return refusal(refused.code, refused.message, refused.http_status)
    return DecisionPublic.model_validate(decided.public())


def _body_problem(
    interrupt_id: str, thread_id: str, body: DecisionCreate, has_payload: bool, s: Settings
) -> tuple[str, str] | None:
    """The AG-UI inputs' limits (`input_limits`), applied to the decision as the resume
    entry it becomes: ids, payload and metadata sizes, strings, nesting, numbers."""
    if body.metadata is None and "metadata" in body.model_fields_set:
        return ErrorCode.INVALID_RESUME, f"metadata: {METADATA_NULL}"
    if reserved := reserved_metadata_keys(body.metadata):
        return ErrorCode.INVALID_RESUME, f"metadata: key {reserved[0][:64]!r} is reserved (ag-ui)"
    try:  # a lone surrogate (`"\\ud800"`) is valid JSON that nothing downstream can encode
        json.dumps([body.payload, body.metadata], ensure_ascii=False).encode()
    except (UnicodeEncodeError, ValueError):
        return ErrorCode.INVALID_PAYLOAD, "the body holds text that is not Unicode"
    sent: dict[str, Any] = {"payload": body.payload} if has_payload else {}
    if body.metadata is not None:  # passed only when sent: `input_problem` refuses a null
        sent["metadata"] = body.metadata
    entry = ResumeEntry(interrupt_id=interrupt_id, status=body.status, **sent)
    run = RunAgentInput(
        thread_id=thread_id,
        run_id="decision",
        messages=[],
        tools=[],
        context=[],
        resume=[entry],
    )
    if (problem := input_problem(run, s)) is not None:
        return ErrorCode.LIMIT_EXCEEDED, problem.replace("resume[0].", "")
    return None
