"""Identity fails closed: the trusting modes serve this machine only, credentials are
checked before a body is read, and `/metrics` and the docs are not public by accident."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
from fastapi.routing import APIRoute
from pydantic import SecretStr
from temporalio.client import Client
from temporalio.worker import Worker

from ag_ui_temporal.gateway.auth import hash_key
from ag_ui_temporal.gateway.deps import AuthenticatedRoute, GatewayRefused, needs_principal
from ag_ui_temporal.gateway.main import create_app
from ag_ui_temporal.gateway.routes import agents, approvals, health
from ag_ui_temporal.settings import Settings
from tests.agui import run_body
from tests.conftest import serve_app

BIN = Path(sys.executable).parent
KEY = "k-" + "x" * 40
TrustingMode = Literal["dev", "none"]
RealMode = Literal["jwt", "api_key"]
FORWARDED = ({"X-Forwarded-For": "127.0.0.1"}, {"Forwarded": "for=127.0.0.1"}, {"X-Real-IP": "::1"})


@asynccontextmanager
async def served(
    settings: Settings, client: Client, **overrides: Any
) -> AsyncIterator[httpx.AsyncClient]:
    """A gateway over real HTTP, uvicorn trusting X-Forwarded-For from anyone (the setup
    where `X-Forwarded-For: 127.0.0.1` could pass for a local caller)."""
    mode = Settings(data_dir=settings.data_dir, task_queue=settings.task_queue, **overrides)
    app = create_app(mode, client)
    async with (
        serve_app(app, forwarded_allow_ips="*") as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        yield http


@pytest.fixture
def keys_file(tmp_path: Path) -> Path:
    path = tmp_path / "keys.json"
    path.write_text(json.dumps([{"sha256": hash_key(KEY), "principal": "alice"}]))
    return path


# -- refusing to start -------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["dev", "none"])
@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "gateway.example"])
def test_trusting_modes_refuse_to_listen_beyond_loopback(mode: TrustingMode, host: str):
    with pytest.raises(GatewayRefused) as refused:
        create_app(Settings(auth_mode=mode, gateway_host=host))
    message = str(refused.value)
    assert f"AUTH_MODE={mode}" in message and f"GATEWAY_HOST={host}" in message
    assert "set AUTH_MODE=jwt or api_key" in message and "GATEWAY_HOST=127.0.0.1" in message


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost", "127.0.0.2"])
def test_trusting_modes_start_on_loopback(host: str):
    modes: tuple[TrustingMode, ...] = ("dev", "none")
    for mode in modes:
        create_app(Settings(auth_mode=mode, gateway_host=host))  # no GatewayRefused


def test_real_modes_may_listen_anywhere(keys_file: Path):
    create_app(Settings(auth_mode="api_key", api_keys_file=keys_file, gateway_host="::"))
    create_app(Settings(auth_mode="jwt", jwt_secret=SecretStr("s" * 64), gateway_host="0.0.0.0"))


@pytest.mark.parametrize(
    ("mode", "needs"),
    [("jwt", "JWT_SECRET, JWT_PUBLIC_KEY or JWT_JWKS_URL"), ("api_key", "API_KEYS_FILE")],
)
def test_a_real_mode_without_its_credentials_is_the_gateways_refusal(mode: RealMode, needs: str):
    """The credentials are the gateway's: a worker reads the same settings (the Kubernetes
    worker gets `AUTH_MODE=jwt` from the shared ConfigMap and no JWT secret) and starts."""
    settings = Settings(auth_mode=mode, gateway_host="0.0.0.0")  # what a worker loads
    with pytest.raises(GatewayRefused) as refused:
        create_app(settings)
    assert str(refused.value).endswith(f"AUTH_MODE={mode} needs {needs}")


@pytest.mark.parametrize("command", ["gateway", "dev"])
def test_the_cli_exits_with_the_setting_to_change(command: str, tmp_path: Path):
    """Before anything starts (no Temporal is running here, none is started)."""
    env = {**os.environ, "AUTH_MODE": "dev", "GATEWAY_HOST": "0.0.0.0", "DATA_DIR": str(tmp_path)}
    done = subprocess.run(
        [str(BIN / "ag-ui-temporal"), command],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "set AUTH_MODE=jwt or api_key, or GATEWAY_HOST=127.0.0.1" in done.stderr.replace(
        " (docs/auth.md)", ""
    )
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "temporal.sqlite").exists()


# -- the peer is the socket's, never a forwarded one --------------------------------------


@pytest.mark.parametrize("mode", ["dev", "none"])
async def test_trusting_modes_ignore_forwarded_addresses(
    settings: Settings, client: Client, worker: Worker, mode: str, thread_id: str
):
    thread = thread_id
    async with served(settings, client, auth_mode=mode) as http:
        for forwarded in FORWARDED:
            headers = {**forwarded, "X-Principal": "bob"}
            posted = await http.post(
                "/agents/assistant", json=run_body(thread, "hi"), headers=headers
            )
            assert posted.status_code == 403, posted.text
            assert "this machine only" in posted.json()["detail"]
            hydrated = await http.get(
                "/agents/assistant", params={"threadId": thread}, headers=headers
            )
            assert hydrated.status_code == 403
            listed = await http.get("/approvals", params={"assignee": "bob"}, headers=forwarded)
            assert listed.status_code == 403  # no headers of its own: not `anonymous` either
        # the same requests, straight from this machine, are served
        direct = await http.get("/agents/assistant", params={"threadId": thread})
        assert direct.status_code == 200
        assert (await http.get("/healthz", headers=FORWARDED[0])).status_code == 200


@pytest.mark.parametrize("mode", ["dev", "none"])
async def test_trusting_modes_refuse_remote_peers(mode: TrustingMode):
    """A remote socket peer (whatever it sends) is refused, with or without X-Principal."""
    app = create_app(Settings(auth_mode=mode))
    remote = httpx.ASGITransport(app=app, client=("203.0.113.9", 40000))
    async with httpx.AsyncClient(transport=remote, base_url="http://gw") as http:
        for headers in ({}, {"X-Principal": "alice"}):
            response = await http.get("/approvals", params={"assignee": "alice"}, headers=headers)
            assert response.status_code == 403, response.text
        assert (await http.get("/agents")).status_code == 200  # public routes stay public


# -- credentials before the body ----------------------------------------------------------

BAD_BODIES: list[dict[str, Any]] = [
    {"content": b"{not json", "headers": {"Content-Type": "application/json"}},
    {"json": {"threadId": 5}},
    {"json": run_body("t-x", "hi") | {"runId": ""}},
    {"content": b"", "headers": {"Content-Type": "application/json"}},
]


async def test_credentials_are_checked_before_the_body(
    settings: Settings, client: Client, worker: Worker, keys_file: Path
):
    modes: list[dict[str, Any]] = [
        {"auth_mode": "api_key", "api_keys_file": keys_file},
        {"auth_mode": "jwt", "jwt_secret": "s" * 64},
    ]
    for overrides in modes:
        async with served(settings, client, **overrides) as http:
            for bad in BAD_BODIES:
                for credentials in ({}, {"Authorization": "Bearer wrong"}):
                    headers = {**bad.get("headers", {}), **credentials}
                    request = {**bad, "headers": headers}
                    response = await http.post("/agents/assistant", **request)
                    assert response.status_code == 401, (overrides, bad, response.text)
                    assert response.headers["www-authenticate"] == "Bearer"
            # query validation comes after authentication too
            assert (await http.get("/approvals", params={"limit": "x"})).status_code == 401
            assert (await http.get("/approvals/c-1")).status_code == 401
            assert (
                await http.get("/agents/assistant", params={"threadId": "t", "limit": "0"})
            ).status_code == 401
            for public in ("/healthz", "/agents", "/agents/assistant/capabilities"):
                assert (await http.get(public)).status_code == 200, public
            # public too: it answers whether Temporal does (503 on a loaded machine's blip)
            assert (await http.get("/readyz")).status_code in (200, 503)
        if overrides["auth_mode"] == "api_key":
            async with served(settings, client, **overrides) as http:
                bad = BAD_BODIES[0]
                headers = {**bad["headers"], "X-API-Key": KEY}
                response = await http.post("/agents/assistant", **{**bad, "headers": headers})
                assert response.status_code == 422  # authenticated: the body is judged


def test_every_route_that_takes_a_principal_authenticates_first():
    app = create_app(Settings())
    routes = [*agents.router.routes, *approvals.router.routes, *health.router.routes]
    routes += list(app.router.routes)
    guarded = [r for r in routes if isinstance(r, APIRoute) and needs_principal(r.dependant)]
    assert len(guarded) >= 5  # run, join, hydrate, list and show approvals
    for route in guarded:
        assert isinstance(route, AuthenticatedRoute), route.path


# -- /metrics and the docs ----------------------------------------------------------------

DOCS = ("/docs", "/redoc", "/openapi.json")


async def test_metrics_and_docs_are_closed_by_default_with_real_auth(
    settings: Settings, client: Client, worker: Worker, keys_file: Path
):
    async with served(settings, client, auth_mode="api_key", api_keys_file=keys_file) as http:
        assert (await http.get("/metrics")).status_code == 401
        metrics = await http.get("/metrics", headers={"X-API-Key": KEY})
        assert metrics.status_code == 200 and "agui_runs" in metrics.text
        for path in DOCS:
            assert (await http.get(path, headers={"X-API-Key": KEY})).status_code == 404, path


async def test_metrics_and_docs_can_be_made_public(
    settings: Settings, client: Client, worker: Worker, keys_file: Path
):
    overrides = {"metrics_public": True, "docs_public": True}
    async with served(
        settings, client, auth_mode="api_key", api_keys_file=keys_file, **overrides
    ) as http:
        assert (await http.get("/metrics")).status_code == 200
        for path in DOCS:
            assert (await http.get(path)).status_code == 200, path
        assert (await http.post("/agents/assistant", json={})).status_code == 401


async def test_loopback_dev_keeps_metrics_and_docs_open_unless_told(
    settings: Settings, client: Client, worker: Worker
):
    async with served(settings, client) as http:  # dev, as `make run`
        assert (await http.get("/metrics")).status_code == 200
        for path in DOCS:
            assert (await http.get(path)).status_code == 200, path
    async with served(settings, client, metrics_public=False, docs_public=False) as http:
        assert (await http.get("/metrics")).status_code == 200  # dev auth: a local caller
        remote = httpx.ASGITransport(
            app=create_app(Settings(metrics_public=False)), client=("203.0.113.9", 1)
        )
        async with httpx.AsyncClient(transport=remote, base_url="http://gw") as far:
            assert (await far.get("/metrics")).status_code == 403
        for path in DOCS:
            assert (await http.get(path)).status_code == 404, path
