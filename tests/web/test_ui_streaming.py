"""The web UI shows an assistant's text while it streams: against the `paced` agent (its
own worker and gateway, `?agent=paced`), the page held part of the reply, in a message
marked as streaming, before the whole of it."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from temporalio.client import Client

from ag_ui_temporal.settings import Settings
from tests.paced import PACED, REPLY, paced_stack
from tests.web.test_ui import WEB_DIST, drive, passed, pytestmark  # noqa: F401  (the skip)


async def test_text_is_shown_while_it_streams(
    settings: Settings, client: Client, executor: ThreadPoolExecutor
) -> None:
    served = settings.model_copy(update={"web_dist": WEB_DIST})
    async with paced_stack(client, served, executor) as url:
        tag = uuid.uuid4().hex[:8]
        results: dict[str, Any] = await drive(url, tag, ["streaming"], agent=PACED)
    result = passed(results, "streaming")
    assert result["finalText"] == REPLY
    seen = result["seen"]
    partial = [s for s in seen if 0 < s["length"] < len(REPLY)]
    assert partial and all(s["streaming"] for s in partial), seen
    assert len({s["length"] for s in partial}) > 1  # it grew in several steps
    assert not result["console"], result["console"]
