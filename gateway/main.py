"""The HTTP edge: builds the FastAPI app that speaks AG-UI in front of Temporal."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from temporalio.client import Client
from temporalio.service import RPCError

from gateway.feeds import RunFeeds
from gateway.routes import agents, approvals, health
from gateway.web import mount_web
from settings import Settings, connect, get_settings

log = logging.getLogger(__name__)


async def temporal_unavailable(request: Request, err: Exception) -> JSONResponse:
    """Temporal did not answer: a clear 503, never a 500 with a stack trace."""
    log.warning("%s %s: Temporal error: %s", request.method, request.url.path, err)
    return JSONResponse({"detail": "Temporal is unavailable; retry"}, status_code=503)


def create_app(settings: Settings | None = None, client: Client | None = None) -> FastAPI:
    """The app; pass `client` to share an existing Temporal connection (tests)."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.temporal = client or await connect(settings)
        yield

    app = FastAPI(title="ag-ui-temporal", version="0.1.0", lifespan=lifespan)
    app.state.settings = settings
    app.state.feeds = RunFeeds()
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST"],
            allow_headers=[
                "Content-Type",
                "Authorization",
                "X-Run-Id",
                "Last-Event-ID",
                "X-Principal",
            ],
        )
    app.add_exception_handler(RPCError, temporal_unavailable)
    app.include_router(agents.router)
    app.include_router(approvals.router)
    app.include_router(health.router)
    mount_web(app, settings.web_dist)  # last: the UI at `/` must not shadow the API
    return app
