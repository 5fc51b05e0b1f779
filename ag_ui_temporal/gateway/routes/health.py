"""Liveness and readiness."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from ag_ui_temporal.gateway.deps import ClientDep, FeedsDep

router = APIRouter(tags=["health"])


class Health(BaseModel):
    status: str
    streams: int
    """Clients following a run through this process right now."""
    readers: int
    """Runs this process reads for them (one per run, however many clients)."""


@router.get("/healthz")
async def get_healthz(feeds: FeedsDep) -> Health:
    """The process serves requests."""
    return Health(status="ok", streams=feeds.followers, readers=feeds.readers)


@router.get("/readyz", response_model=None)
async def get_readyz(client: ClientDep) -> dict[str, str] | JSONResponse:
    """Temporal answers: runs can be served."""
    try:
        await client.service_client.check_health()
    except Exception as err:  # any failure means "not ready", never a 500
        return JSONResponse({"status": "unavailable", "detail": type(err).__name__}, 503)
    return {"status": "ready"}
