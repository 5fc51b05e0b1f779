"""FastAPI dependencies: the Temporal client and settings, as annotated aliases."""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from temporalio.client import Client

from gateway.auth import Authenticator, Principal, build_authenticator
from gateway.feeds import RunFeeds
from settings import Settings
from workflows.contract import AGENTS

log = logging.getLogger(__name__)


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


async def get_principal(request: Request) -> Principal:
    """Who is calling, by `AUTH_MODE` (gateway/auth.py); 401 when credentials are missing
    or wrong. The authenticator is built once per app, at its first request."""
    authenticator: Authenticator | None = getattr(request.app.state, "authenticator", None)
    if authenticator is None:
        try:
            authenticator = build_authenticator(request.app.state.settings)
        except (OSError, ValueError) as err:  # e.g. an unreadable API_KEYS_FILE: never a 500
            log.error("authentication is misconfigured: %s", err)
            raise HTTPException(503, "authentication is misconfigured; see the log") from None
        request.app.state.authenticator = authenticator
    return await authenticator.authenticate(request)


ClientDep = Annotated[Client, Depends(get_client)]
PrincipalDep = Annotated[Principal, Depends(get_principal)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
FeedsDep = Annotated[RunFeeds, Depends(get_feeds)]
AgentDep = Annotated[str, Depends(known_agent)]
