"""FastAPI dependencies: the Temporal client and settings, as annotated aliases."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, HTTPException, Request
from temporalio.client import Client

from gateway.feeds import RunFeeds
from settings import Settings
from workflows.contract import AGENTS


async def get_client(request: Request) -> Client:
    client: Client | None = getattr(request.app.state, "temporal", None)
    if client is None:
        raise HTTPException(503, "not connected to Temporal yet")
    return client


async def get_settings(request: Request) -> Settings:
    return request.app.state.settings


async def get_feeds(request: Request) -> RunFeeds:
    return request.app.state.feeds


async def known_agent(agent: str) -> str:
    if agent not in AGENTS:
        raise HTTPException(404, f"unknown agent {agent!r}; GET /agents lists them")
    return agent


LOOPBACK = {"127.0.0.1", "::1", "localhost"}


async def get_principal(
    request: Request, x_principal: Annotated[str | None, Header()] = None
) -> str | None:
    """Who is calling. Dev auth: the `X-Principal` header, from loopback clients only
    (the security issue adds API keys and JWTs)."""
    settings: Settings = request.app.state.settings
    if settings.auth_mode != "dev" or x_principal is None:
        return None
    host = request.client.host if request.client else None
    if host not in LOOPBACK:
        raise HTTPException(403, "X-Principal is accepted from loopback clients only")
    principal = x_principal.strip()
    return principal or None


ClientDep = Annotated[Client, Depends(get_client)]
PrincipalDep = Annotated[str | None, Depends(get_principal)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
FeedsDep = Annotated[RunFeeds, Depends(get_feeds)]
AgentDep = Annotated[str, Depends(known_agent)]
