"""The HTTP edge: builds the FastAPI app that speaks AG-UI in front of Temporal."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import TYPE_CHECKING

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from sqlalchemy.exc import SQLAlchemyError
from temporalio.client import Client
from temporalio.service import RPCError

from ag_ui_temporal.agents.catalog import catalog
from ag_ui_temporal.gateway.decision_ids import RunIdKey
from ag_ui_temporal.gateway.deps import startup_authenticator
from ag_ui_temporal.gateway.errors import invalid_request
from ag_ui_temporal.gateway.limits import BodyLimit
from ag_ui_temporal.gateway.metrics import add_metrics
from ag_ui_temporal.gateway.routes import (
    agents,
    approvals,
    audit,
    cancel,
    decisions,
    health,
    inbox,
    links,
    me,
    standing,
)
from ag_ui_temporal.gateway.streaming import RunFeeds, Snapshots
from ag_ui_temporal.gateway.web import mount_web
from ag_ui_temporal.observability.tracing import instrument_app
from ag_ui_temporal.settings import Settings, get_settings
from ag_ui_temporal.store import ServerSecrets, Transcript, UsedLinks, open_engine
from ag_ui_temporal.store.audit import AuditLog
from ag_ui_temporal.temporal_client import connect

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

log = logging.getLogger(__name__)


async def temporal_unavailable(request: Request, err: Exception) -> JSONResponse:
    """Temporal did not answer: a clear 503, never a 500 with a stack trace."""
    log.warning("%s %s: Temporal error: %s", request.method, request.url.path, err)
    return JSONResponse({"detail": "Temporal is unavailable; retry"}, status_code=503)


async def store_unavailable(request: Request, err: Exception) -> JSONResponse:
    """The store (the transcript archive) did not answer: a clear 503 as well."""
    log.warning("%s %s: store error: %s", request.method, request.url.path, err)
    return JSONResponse({"detail": "the store is unavailable; retry"}, status_code=503)


def create_app(
    settings: Settings | None = None,
    client: Client | None = None,
    *,
    tracer_provider: TracerProvider | None = None,
) -> FastAPI:
    """The app; pass `client` to share an existing Temporal connection (tests), and
    `tracer_provider` to trace with another than the global one (`OTEL_ENABLED`).
    Raises `GatewayRefused` when the configuration must not serve (e.g. `AUTH_MODE=dev` off
    loopback, an unreadable `API_KEYS_FILE`)."""
    settings = settings or get_settings()
    authenticator = startup_authenticator(settings)
    store = open_engine(settings.store_url)  # connects at its first read

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.temporal = client or await connect(settings, tracer_provider=tracer_provider)
        try:
            yield
        finally:
            await store.dispose()

    docs = settings.public(settings.docs_public)  # not public: not served at all
    app = FastAPI(
        title="ag-ui-temporal",
        version=version("ag-ui-temporal"),  # the installed distribution's
        lifespan=lifespan,
        openapi_url="/openapi.json" if docs else None,
    )
    app.state.settings = settings
    app.state.agents = catalog(settings)
    app.state.authenticator = authenticator
    app.state.feeds = RunFeeds()
    app.state.transcript = Transcript(store)  # the archive: hydrate pages, whole snapshots
    app.state.used_links = UsedLinks(store)  # a decision link decides once, on any replica
    app.state.run_id_key = RunIdKey(ServerSecrets(store))  # decisions' run ids, every replica's
    app.state.store = store  # the store's engine, for who the JWTs name (auth.py)
    app.state.audit = AuditLog(store)  # GET /audit and the chains' trails: never Temporal
    app.state.snapshots = Snapshots(app.state.transcript, settings.snapshot_max_bytes)
    add_metrics(app, public=settings.public(settings.metrics_public))  # and the SSE gauge
    instrument_app(app, settings, tracer_provider)  # nothing unless OTEL_ENABLED
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)  # inside CORS: 413s get it
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
                "X-Principal-Groups",
                "X-API-Key",
            ],
        )
    app.add_exception_handler(RPCError, temporal_unavailable)
    app.add_exception_handler(SQLAlchemyError, store_unavailable)
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.include_router(agents.router)
    app.include_router(cancel.router)
    app.include_router(standing.router)
    app.include_router(approvals.router)
    app.include_router(audit.router)
    app.include_router(inbox.router)
    app.include_router(decisions.router)
    app.include_router(links.router)
    app.include_router(health.router)
    app.include_router(me.router)
    mount_web(app, settings.web_dist)  # last: the UI at `/` must not shadow the API
    return app
