"""The AG-UI endpoint: `POST /agents/{agent}` and what describes the agents."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated

from ag_ui.core import AgentCapabilities, HumanInTheLoopCapabilities, RunAgentInput
from fastapi import APIRouter, Body, Depends, HTTPException
from fastapi.sse import EventSourceResponse, ServerSentEvent
from pydantic import BaseModel

from gateway.deps import AgentDep, ClientDep, SettingsDep
from gateway.runs import stream_run
from workflows.contract import AGENTS

router = APIRouter(prefix="/agents", tags=["agents"])


class AgentPublic(BaseModel):
    name: str
    description: str
    url: str


@router.get("")
async def list_agents() -> list[AgentPublic]:
    return [
        AgentPublic(name=name, description=text, url=f"/agents/{name}")
        for name, text in AGENTS.items()
    ]


@router.get("/{agent}/capabilities")
async def get_capabilities(agent: AgentDep) -> dict[str, object]:
    capabilities = AgentCapabilities(
        human_in_the_loop=HumanInTheLoopCapabilities(
            supported=True, approvals=True, interrupts=True, approve_with_edits=True
        )
    )
    return capabilities.model_dump(mode="json", by_alias=True)


def run_input(body: Annotated[RunAgentInput, Body()]) -> RunAgentInput:
    """The POST body, checked beyond its schema before any stream starts."""
    if not body.thread_id.strip() or not body.run_id.strip():
        raise HTTPException(422, "threadId and runId must be non-empty")
    return body


@router.post("/{agent}", response_class=EventSourceResponse)
async def post_run(
    agent: AgentDep,
    body: Annotated[RunAgentInput, Depends(run_input)],
    client: ClientDep,
    settings: SettingsDep,
) -> AsyncIterator[ServerSentEvent]:
    """Run the agent (new input or a resume) and stream the run's AG-UI events."""
    async for event in stream_run(client, settings, agent, body):
        yield ServerSentEvent(raw_data=json.dumps(event, separators=(",", ":")))
