"""The HTTP edge: builds the FastAPI app that speaks AG-UI in front of Temporal."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from temporalio.client import Client

from gateway.routes import agents, health
from settings import Settings, connect, get_settings

log = logging.getLogger(__name__)


def create_app(settings: Settings | None = None, client: Client | None = None) -> FastAPI:
    """The app; pass `client` to share an existing Temporal connection (tests)."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.temporal = client or await connect(settings)
        yield

    app = FastAPI(title="ag-ui-temporal", version="0.1.0", lifespan=lifespan)
    app.state.settings = settings
    app.include_router(agents.router)
    app.include_router(health.router)
    return app
