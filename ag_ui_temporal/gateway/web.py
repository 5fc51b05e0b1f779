"""The reference web UI (`web/`, built into the package by `make web`), served at `/`."""

from __future__ import annotations

import logging
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import PlainTextResponse
from fastapi.staticfiles import StaticFiles

WEB_MOUNT = "web"
NO_WEB = "web-missing"

log = logging.getLogger(__name__)


def how_to_get_the_ui(dist: Path) -> str:
    """What a person who expected the UI at `/` reads instead (and the gateway logs)."""
    return (
        f"No web UI at {dist}: this gateway serves the AG-UI API alone.\n"
        "To serve the UI at /, build it from a checkout of ag-ui-temporal with `make web`\n"
        "(npm; it writes ag_ui_temporal/web, which a wheel built afterwards carries), or set\n"
        "WEB_DIST to a folder holding a built UI (its index.html), then restart.\n"
    )


def mount_web(app: FastAPI, dist: Path | None) -> None:
    """Serve the built UI at `/` when `dist` holds one; when it does not, `/` says how to
    get it (404). `dist` None: no UI, and nothing is said.

    Call it after every router: a mount at `/` matches any path, so the API
    routes must come before it (`tests/web/test_ui.py` checks it stays last).
    """
    if dist is None:
        return
    if (dist / "index.html").is_file():
        app.mount("/", StaticFiles(directory=dist, html=True), name=WEB_MOUNT)
        return
    message = how_to_get_the_ui(dist)
    log.warning("%s", message.replace("\n", " ").strip())

    async def missing_ui() -> PlainTextResponse:
        return PlainTextResponse(message, status_code=404)

    app.add_api_route("/", missing_ui, methods=["GET"], include_in_schema=False, name=NO_WEB)
