"""`GET /me` over real HTTP: who the gateway takes the caller for, in `dev` and `api_key`."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from temporalio.client import Client

from ag_ui_temporal.gateway.auth import hash_key
from ag_ui_temporal.settings import Settings
from tests.conftest import serve_gateway

KEY = "me-test-key-0123456789"


async def test_me_in_dev_mode_names_the_header_principal(settings: Settings, client: Client):
    async with serve_gateway(settings, client) as url, httpx.AsyncClient(base_url=url) as http:
        me = await http.get("/me", headers={"X-Principal": "bob", "X-Principal-Groups": "finance"})
        assert me.json() == {"principal": "bob", "groups": ["finance"], "authMode": "dev"}
        anonymous = await http.get("/me")
        assert anonymous.json() == {"principal": "anonymous", "groups": [], "authMode": "dev"}


async def test_me_in_api_key_mode_needs_a_key(settings: Settings, client: Client, tmp_path: Path):
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps([{"sha256": hash_key(KEY), "principal": "carol", "groups": ["x"]}]))
    mode = Settings(
        data_dir=settings.data_dir,
        task_queue=settings.task_queue,
        auth_mode="api_key",
        api_keys_file=keys,
    )
    async with serve_gateway(mode, client) as url, httpx.AsyncClient(base_url=url) as http:
        me = await http.get("/me", headers={"Authorization": f"Bearer {KEY}"})
        assert me.json() == {"principal": "carol", "groups": ["x"], "authMode": "api_key"}
        for headers in ({}, {"X-Principal": "carol"}, {"Authorization": "Bearer wrong"}):
            refused = await http.get("/me", headers=headers)
            assert refused.status_code == 401, headers
            assert refused.headers["www-authenticate"] == "Bearer"
            assert KEY not in refused.text
