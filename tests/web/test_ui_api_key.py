"""The reference UI against a gateway that authenticates (`AUTH_MODE=api_key`, the compose
demo's setup): without a key the page says to sign in; with alice's key it works as alice."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.worker import Worker

from ag_ui_temporal.gateway.auth import hash_key
from ag_ui_temporal.settings import Settings
from tests.conftest import serve_gateway
from tests.effects import EffectLog
from tests.web.test_ui import WEB_DIST, drive, passed, ready

pytestmark = pytest.mark.skipif(
    not ready, reason="needs web/dist, tests/web/node_modules and chromium (make test does it)"
)
ALICE = f"ui-key-alice-{uuid.uuid4().hex}"


@pytest.fixture(scope="module")
async def key_url(
    settings: Settings, client: Client, worker: Worker, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[str]:
    keys = tmp_path_factory.mktemp("keys") / "keys.json"
    keys.write_text(json.dumps([{"sha256": hash_key(ALICE), "principal": "alice"}]))
    update = {"web_dist": WEB_DIST, "auth_mode": "api_key", "api_keys_file": keys}
    async with serve_gateway(settings.model_copy(update=update), client) as url:
        yield url


async def test_sign_in_with_a_key_then_approve_an_email(key_url: str, outbox: EffectLog) -> None:
    tag = uuid.uuid4().hex[:8]
    result: dict[str, Any] = passed(await drive(key_url, tag, ["apiKey"], apiKey=ALICE), "apiKey")
    assert "sign in with an API key" in result["signInMessage"]
    assert result["unlabelled"] == []
    assert result["principal"] == "alice"
    assert result["sentBearer"] and not result["sentXPrincipal"]
    assert result["toolResults"] >= 1 and result["cardsAfter"] == 0
    assert f"key-{tag}@example.com" in {e["args"]["to"] for e in outbox.effects("sendEmail")}
    assert result["inboxThread"] == 1  # the inbox is alice's: the principal /me named
    # the only console errors are the browser logging the refused (401) requests
    assert all("401" in line for line in result["console"]), result["console"]
