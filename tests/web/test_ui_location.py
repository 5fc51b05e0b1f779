"""Where the gateway finds the web UI, without a browser: by default the UI installed with the
package (`make web` builds it there), whatever the working directory; an explicit `WEB_DIST`
(the image's `/opt/web`) instead; and, when there is none, a `/` that says how to get it.
tests/test_wheel.py does the same from a wheel installed in a fresh venv."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from ag_ui_temporal.gateway.main import create_app
from ag_ui_temporal.gateway.web import NO_WEB, WEB_MOUNT
from ag_ui_temporal.settings import PACKAGED_WEB, Settings
from tests.modules import ROOT


def test_the_default_is_the_packaged_ui_wherever_the_process_runs(tmp_path: Path) -> None:
    assert PACKAGED_WEB == ROOT / "ag_ui_temporal" / "web"
    code = "from ag_ui_temporal.settings import Settings; print(Settings().web_dist)"
    env = {k: v for k, v in os.environ.items() if k != "WEB_DIST"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()) == PACKAGED_WEB


def test_an_explicit_web_dist_is_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WEB_DIST", "/opt/web")
    assert Settings().web_dist == Path("/opt/web")


@pytest.fixture
def built(tmp_path: Path) -> Path:
    """A built UI of its own (not the repository's, which may not be built)."""
    dist = tmp_path / "ui"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text('<div id="root">mine</div>')
    (dist / "assets" / "app.js").write_text("console.log('mine')")
    return dist


async def get(app: FastAPI, *paths: str) -> list[httpx.Response]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as http:
        return [await http.get(path) for path in paths]


async def test_an_explicit_web_dist_is_served_at_root(settings: Settings, built: Path) -> None:
    served = settings.model_copy(update={"web_dist": built})
    page, asset = await get(create_app(served, client=None), "/", "/assets/app.js")
    assert (page.status_code, page.text) == (200, '<div id="root">mine</div>')
    assert (asset.status_code, asset.text) == (200, "console.log('mine')")


async def test_without_a_built_ui_root_says_how_to_get_it(
    settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    missing = settings.model_copy(update={"web_dist": tmp_path / "not-built"})
    app = create_app(missing, client=None)
    assert getattr(app.routes[-1], "name", None) == NO_WEB  # after every API route
    assert "/" not in app.openapi()["paths"]  # not part of the API
    [page] = await get(app, "/")
    assert page.status_code == 404
    assert "make web" in page.text and "WEB_DIST" in page.text
    assert str(tmp_path / "not-built") in page.text
    assert any("make web" in record.getMessage() for record in caplog.records)  # and logs it


def test_web_dist_unset_means_no_ui_and_nothing_at_root(settings: Settings) -> None:
    app = create_app(settings.model_copy(update={"web_dist": None}), client=None)
    assert not {WEB_MOUNT, NO_WEB} & {getattr(r, "name", None) for r in app.routes}
