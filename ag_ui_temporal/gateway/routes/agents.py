"""The AG-UI endpoint: `POST /agents/{agent}` runs; the GETs TanStack uses on the same URL."""

from __future__ import annotations

import re
from typing import Annotated, Any

from ag_ui.core import AgentCapabilities, HumanInTheLoopCapabilities, RunAgentInput
from fastapi import APIRouter, Body, Depends, Header, HTTPException, Query, Request, Response
from fastapi.sse import EventSourceResponse
from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from ag_ui_temporal.agents.catalog import AgentCard
from ag_ui_temporal.gateway.access import Access, is_admin
from ag_ui_temporal.gateway.approval_tools import (
    client_tool_differences,
    noting_client_tools,
    typescript_module,
)
from ag_ui_temporal.gateway.deps import (
    AgentDep,
    AuthenticatedRoute,
    ClientDep,
    FeedsDep,
    PrincipalDep,
    RunsDep,
    SettingsDep,
    TranscriptDep,
)
from ag_ui_temporal.gateway.hydrate import BadCursor, hydrate_thread
from ag_ui_temporal.gateway.input_limits import id_problem, input_problem
from ag_ui_temporal.gateway.limits import RunQuotaDep, StreamSlotDep
from ag_ui_temporal.gateway.older_clients import RunInput
from ag_ui_temporal.gateway.routing import requiring_query
from ag_ui_temporal.gateway.runs import stream_run
from ag_ui_temporal.gateway.streaming import (
    Batch,
    archived_run,
    archived_stream,
    event_stream,
    find_thread,
    join_stream,
    read_run,
    thread_handle,
)
from ag_ui_temporal.gateway.streaming.snapshots import WINDOW_ONLY
from ag_ui_temporal.gateway.tanstack import ThreadHydration
from ag_ui_temporal.workflows.contract.standing import STANDING_METADATA_KEY

router = APIRouter(prefix="/agents", tags=["agents"], route_class=AuthenticatedRoute)


class AgentPublic(BaseModel):
    name: str
    description: str
    url: str


@router.get("")
async def list_agents(request: Request) -> list[AgentPublic]:
    cards: dict[str, AgentCard] = request.app.state.agents
    return [
        AgentPublic(name=name, description=card.description, url=f"/agents/{name}")
        for name, card in cards.items()
    ]


@router.get("/{agent}/capabilities")
async def get_capabilities(agent: AgentDep, request: Request) -> dict[str, object]:
    card: AgentCard = request.app.state.agents[agent]
    capabilities = AgentCapabilities(
        human_in_the_loop=HumanInTheLoopCapabilities(
            supported=True,
            approvals=True,
            interrupts=True,
            approve_with_edits=card.approve_with_edits,
        ),
        custom=_standing_capability(card),
    )
    return capabilities.model_dump(mode="json", by_alias=True, exclude_none=True)


def _standing_capability(card: AgentCard) -> dict[str, object] | None:
    """Whether its approvals offer standing decisions, and up to how long
    (`workflows.contract.standing`)."""
    if card.standing_approvals is None:
        return None
    longest = int(card.standing_approvals.total_seconds())
    return {STANDING_METADATA_KEY: {"maxExpiresInSeconds": longest}}


@router.get(
    "/{agent}/tools.ts",
    response_class=Response,
    responses={200: {"content": {"text/typescript": {}}, "description": "A TypeScript module"}},
)
async def get_tool_definitions(agent: AgentDep, _principal: PrincipalDep) -> Response:
    """TanStack AI tool definitions of the tools the agent asks a person to approve, whose
    schemas hash like its approvals' (so a client registering them gets `tool-approval`
    items): the same file as `ag-ui-temporal tools <agent>` writes. Authenticated, as runs
    are: it shows the agent's tools."""
    return Response(typescript_module(agent), media_type="text/typescript")


async def run_input(body: Annotated[RunInput, Body()], request: Request) -> RunAgentInput:
    """The POST body (legacy parts of clients before AG-UI 1.0 upgraded: `older_clients`),
    checked beyond its schema (and against the limits) before any stream."""
    if not body.thread_id.strip() or not body.run_id.strip():
        raise HTTPException(422, "threadId and runId must be non-empty")
    if not _encodable(body):
        raise HTTPException(422, "the body holds text that is not Unicode (a lone surrogate)")
    if (problem := input_problem(body, request.app.state.settings)) is not None:
        raise HTTPException(422, problem)
    return body


def _encodable(body: RunAgentInput) -> bool:
    """JSON may escape lone surrogates (`"\\ud800"`); nothing downstream can encode them."""
    try:
        body.model_dump_json()
    except PydanticSerializationError:
        return False
    return True


EVENT_OFFSET = re.compile(r"-?[0-9]{1,18}")
"""An SSE id this server sends (a log offset), or -1 (before the first event, as a join's
`?offset=-1`). ASCII digits only: `str.isdigit` also takes `²`, which `int` refuses."""


async def event_offset(last_event_id: Annotated[str | None, Header()] = None) -> int | None:
    """`Last-Event-ID`: the offset of the last event the client has."""
    if last_event_id is None:
        return None
    if not EVENT_OFFSET.fullmatch(offset := last_event_id.strip(" \t")):
        raise HTTPException(400, "Last-Event-ID must be an event offset sent by this server")
    return int(offset)


OffsetDep = Annotated[int | None, Depends(event_offset)]


SSE_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/event-stream": {}}, "description": "AG-UI events"}
}


@router.post("/{agent}", response_class=Response, responses=SSE_RESPONSE)
async def post_run(
    agent: AgentDep,
    _slot: StreamSlotDep,  # both 429s come before the body is checked
    _quota: RunQuotaDep,
    body: Annotated[RunAgentInput, Depends(run_input)],
    runs: RunsDep,
    last_event_id: OffsetDep,
    principal: PrincipalDep,
) -> EventSourceResponse:
    """Run the agent (new input or a resume) and stream the run's AG-UI events.

    Re-sent with `Last-Event-ID`, the same POST re-attaches to the same run and
    gets only the events after that offset; nothing is started or applied twice.
    """
    client, feeds, settings, snapshots = runs.client, runs.feeds, runs.settings, runs.snapshots
    events = stream_run(client, feeds, settings, agent, body, last_event_id, principal, snapshots)
    if differences := client_tool_differences(agent, body.tools):
        events = noting_client_tools(events, differences)  # its approvals will be generic
    return event_stream(events, settings.sse_keepalive.total_seconds())


class JoinTarget(BaseModel):
    workflow_id: str
    run_id: str
    after: int
    archived: Batch | None = None
    """The run's events from the store's archive (they left the thread's log)."""


async def join_target(
    agent: AgentDep,
    client: ClientDep,
    run_id: Annotated[str, Query(alias="runId", min_length=1)],
    last_event_id: OffsetDep,
    principal: PrincipalDep,
    transcript: TranscriptDep,
    settings: SettingsDep,
    offset: int = -1,
    thread_id: Annotated[str | None, Query(alias="threadId")] = None,
) -> JoinTarget:
    """The run to join, or 404 before any stream starts (also for another's thread, or a
    thread of another agent: the same answer as an unknown run, as hydrate gives). A run
    the thread's log no longer holds is read from the archive (with `threadId`)."""
    if not thread_id:
        workflow_id = await find_thread(client, run_id)
    elif id_problem(thread_id, settings) is None:
        workflow_id = thread_handle(client, thread_id).id
    else:  # no thread has such an id (Temporal would refuse it as a workflow id)
        workflow_id = None
    after = offset if last_event_id is None else last_event_id
    if workflow_id is not None:
        handle = client.get_workflow_handle(workflow_id)
        page = await read_run(handle, run_id, after)
        access = Access(principal, is_admin(principal, settings), expected_agent=agent)
        if access.sees(page.owner, page.agent):  # the run's log tells the thread's owner
            target = JoinTarget(workflow_id=workflow_id, run_id=run_id, after=after)
            if page.found:
                return target
            if thread_id:  # the thread is there: is the run one that left its log?
                target.archived = await archived_run(transcript, handle, thread_id, run_id, after)
                if target.archived is not None:
                    return target
    raise HTTPException(404, f"no run {run_id[:200]!r} here")


async def get_run_events(
    _slot: StreamSlotDep,
    _quota: RunQuotaDep,  # a join counts as a run: it sends as much, and looks the run up
    target: Annotated[JoinTarget, Depends(join_target)],
    client: ClientDep,
    feeds: FeedsDep,
    settings: SettingsDep,
) -> EventSourceResponse:
    """Join a run (`?runId=R&offset=-1`): its events after the offset, then the live tail;
    its `MESSAGES_SNAPSHOT` holds the thread's window (older messages: hydrate's pages)."""
    handle = client.get_workflow_handle(target.workflow_id)
    if target.archived is not None:
        events = archived_stream(target.archived, WINDOW_ONLY)
    else:
        events = join_stream(feeds, handle, target.run_id, target.after, WINDOW_ONLY)
    return event_stream(events, settings.sse_keepalive.total_seconds())


async def get_thread(
    agent: AgentDep,
    client: ClientDep,
    thread_id: Annotated[str, Query(alias="threadId", min_length=1)],
    principal: PrincipalDep,
    settings: SettingsDep,
    transcript: TranscriptDep,
    limit: Annotated[int | None, Query(ge=1, le=1000)] = None,
    before: Annotated[str | None, Query(max_length=64)] = None,
) -> ThreadHydration:
    """Hydrate a thread (`?threadId=T`): its newest messages, pending interrupts, active run;
    `before=<page.cursor>` pages back to the first message (a forged cursor is a 400).
    Another principal's thread hydrates as an unknown one does (empty), at the same cost:
    no existence leak."""
    handle = thread_handle(client, thread_id)
    admin = is_admin(principal, settings)
    try:
        page = (limit, before)
        return await hydrate_thread(handle, thread_id, agent, principal, admin, page, transcript)
    except BadCursor:
        raise HTTPException(400, "before: not a cursor this thread's pages gave") from None


# Both GETs share the agent URL, told apart by their query (see gateway/routing.py).
router.add_api_route(
    "/{agent}",
    get_run_events,
    methods=["GET"],
    response_class=Response,
    route_class_override=requiring_query("runId"),
    include_in_schema=False,  # one OpenAPI operation per path and method: hydrate's
)
router.add_api_route(
    "/{agent}", get_thread, methods=["GET"], route_class_override=requiring_query("threadId")
)
