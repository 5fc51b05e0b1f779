"""The reference web UI (`web/`, built to `web/dist`), served by the gateway at `/`."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

WEB_MOUNT = "web"


def mount_web(app: FastAPI, dist: Path | None) -> None:
    """Serve the built UI at `/` when `dist` holds one (`make run` builds it).

    Call it after every router: a mount at `/` matches any path, so the API
    routes must come before it (`tests/web/test_ui.py` checks it stays last).
    """
    if dist is not None and (dist / "index.html").is_file():
        app.mount("/", StaticFiles(directory=dist, html=True), name=WEB_MOUNT)
