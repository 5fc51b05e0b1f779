"""Liveness and readiness."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from gateway.deps import ClientDep

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def get_healthz() -> dict[str, str]:
    """The process serves requests."""
    return {"status": "ok"}


@router.get("/readyz", response_model=None)
async def get_readyz(client: ClientDep) -> dict[str, str] | JSONResponse:
    """Temporal answers: runs can be served."""
    try:
        await client.service_client.check_health()
    except Exception as err:  # any failure means "not ready", never a 500
        return JSONResponse({"status": "unavailable", "detail": type(err).__name__}, 503)
    return {"status": "ready"}
