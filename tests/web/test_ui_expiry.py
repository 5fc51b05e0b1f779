"""The web UI's expired card holds up nothing: a form whose deadline passed while the page
was open says so, the composer stays open, and a new message is answered (the UI first
acknowledges the expired form with a cancel: TanStack sends nothing new while it holds an
interrupt). Its own gateway gives forms 2 s (`INPUT_EXPIRES_IN`), in front of the session's
worker."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from temporalio.client import Client
from temporalio.worker import Worker

from ag_ui_temporal.settings import Settings
from tests.conftest import serve_gateway
from tests.web.test_ui import WEB_DIST, drive, passed, pytestmark  # noqa: F401  (the skip)


async def test_an_expired_card_does_not_lock_the_composer(
    settings: Settings, client: Client, worker: Worker
) -> None:
    served = settings.model_copy(
        update={"web_dist": WEB_DIST, "input_expires_in": timedelta(seconds=2)}
    )
    async with serve_gateway(served, client) as url:
        results: dict[str, Any] = await drive(url, uuid.uuid4().hex[:8], ["expired"])
    result = passed(results, "expired")
    assert "Expired." in result["cardText"] and "Submit" not in result["cardText"]
    assert result["composerDisabled"] is False
    assert result["cardsAfter"] == 0
    [[acknowledged]] = result["resumes"]  # one run: the cancel old clients send too
    assert acknowledged["status"] == "cancelled" and "payload" not in acknowledged
    assert result["cardsAfterReload"] == 0  # hydrate offers nothing to resolve
    assert result["composerDisabledAfterReload"] is False
    assert not result["console"], result["console"]
