"""FastAPI dependencies: the Temporal client, the store, settings and the caller, as aliases;
and the route class that authenticates before a body is read."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request, Response
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from temporalio.client import Client

from ag_ui_temporal.gateway.auth import (
    Authenticator,
    Principal,
    build_authenticator,
    exposure_problem,
)
from ag_ui_temporal.gateway.decision_ids import RunIdKey
from ag_ui_temporal.gateway.streaming import RunFeeds, Snapshots
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.store import Transcript, UsedLinks


async def get_client(request: Request) -> Client:
    client: Client | None = getattr(request.app.state, "temporal", None)
    if client is None:
        raise HTTPException(503, "not connected to Temporal yet")
    return client


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_feeds(request: Request) -> RunFeeds:
    feeds: RunFeeds = request.app.state.feeds
    return feeds


async def get_transcript(request: Request) -> Transcript:
    transcript: Transcript = request.app.state.transcript
    return transcript


async def get_used_links(request: Request) -> UsedLinks:
    used_links: UsedLinks = request.app.state.used_links
    return used_links


async def get_run_id_key(request: Request) -> RunIdKey:
    run_id_key: RunIdKey = request.app.state.run_id_key
    return run_id_key


@dataclass(frozen=True)
class Runs:
    """What serving a run takes from the app, as one dependency: FastAPI solves each
    dependency of a route on every request, and this route is the hot one."""

    client: Client
    feeds: RunFeeds
    settings: Settings
    snapshots: Snapshots


async def get_runs(request: Request) -> Runs:
    state = request.app.state
    return Runs(await get_client(request), state.feeds, state.settings, state.snapshots)


async def known_agent(agent: str, request: Request) -> str:
    if agent not in request.app.state.agents:
        raise HTTPException(404, f"unknown agent {agent!r}; GET /agents lists them")
    return agent


class GatewayRefused(ValueError):
    """This configuration must not serve: the message says which setting to change."""


def startup_authenticator(settings: Settings) -> Authenticator:
    """The app's authenticator, built before it serves: an unsafe or broken configuration
    stops the process with a clear message instead of answering requests."""
    if (problem := exposure_problem(settings)) is not None:
        raise GatewayRefused(problem)
    try:
        return build_authenticator(settings)
    except (OSError, ValueError) as err:  # e.g. an unreadable API_KEYS_FILE
        source = (
            f"API_KEYS_FILE={settings.api_keys_file}"
            if settings.auth_mode == "api_key" and settings.api_keys_file is not None
            else f"AUTH_MODE={settings.auth_mode}"
        )
        raise GatewayRefused(f"authentication is misconfigured: {source}: {err}") from None


async def authenticate(request: Request) -> Principal:
    authenticator: Authenticator = request.app.state.authenticator
    return await authenticator.authenticate(request)


async def get_principal(request: Request) -> Principal:
    """Who is calling, by `AUTH_MODE` (gateway/auth.py); 401 when credentials are missing
    or wrong. `AuthenticatedRoute` has already asked, before the body was read."""
    principal: Principal | None = getattr(request.state, "principal", None)
    return principal if principal is not None else await authenticate(request)


def needs_principal(dependant: Dependant) -> bool:
    return any(dep.call is get_principal or needs_principal(dep) for dep in dependant.dependencies)


class AuthenticatedRoute(APIRoute):
    """A route that takes a `PrincipalDep` authenticates first: FastAPI reads and validates
    the body before any dependency runs, so a caller without credentials would otherwise
    learn about the body (422) instead of being told to authenticate (401)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        if not needs_principal(self.dependant):
            return handler

        async def authenticated(request: Request) -> Response:
            request.state.principal = await authenticate(request)
            return await handler(request)

        return authenticated


ClientDep = Annotated[Client, Depends(get_client)]
PrincipalDep = Annotated[Principal, Depends(get_principal)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
FeedsDep = Annotated[RunFeeds, Depends(get_feeds)]
TranscriptDep = Annotated[Transcript, Depends(get_transcript)]
UsedLinksDep = Annotated[UsedLinks, Depends(get_used_links)]
RunIdKeyDep = Annotated[RunIdKey, Depends(get_run_id_key)]
AgentDep = Annotated[str, Depends(known_agent)]
RunsDep = Annotated[Runs, Depends(get_runs)]
