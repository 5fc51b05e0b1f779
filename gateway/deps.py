"""FastAPI dependencies: the Temporal client and settings, as annotated aliases."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Request
from temporalio.client import Client

from gateway.feeds import RunFeeds
from settings import Settings
from workflows.contract import AGENTS


def get_client(request: Request) -> Client:
    client: Client | None = getattr(request.app.state, "temporal", None)
    if client is None:
        raise HTTPException(503, "not connected to Temporal yet")
    return client


def get_settings(request: Request) -> Settings:
    return request.app.state.settings


def get_feeds(request: Request) -> RunFeeds:
    return request.app.state.feeds


def known_agent(agent: str) -> str:
    if agent not in AGENTS:
        raise HTTPException(404, f"unknown agent {agent!r}; GET /agents lists them")
    return agent


ClientDep = Annotated[Client, Depends(get_client)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
FeedsDep = Annotated[RunFeeds, Depends(get_feeds)]
AgentDep = Annotated[str, Depends(known_agent)]
