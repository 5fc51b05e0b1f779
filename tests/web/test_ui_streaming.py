"""The web UI while an assistant's text streams, against the `paced` agent (its own worker
and gateway, `?agent=paced`): the page holds part of the reply, in a message marked as
streaming, before the whole of it; and Stop ends the run there, the text shown so far kept
and marked stopped, and the next message is answered."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from temporalio.client import Client

from ag_ui_temporal.settings import Settings
from tests.paced import PACED, REPLY, paced_stack
from tests.web.test_ui import WEB_DIST, drive, passed, pytestmark  # noqa: F401  (the skip)


@pytest.fixture(scope="module")
async def paced_ui(settings: Settings, client: Client, executor: ThreadPoolExecutor) -> Any:
    """Both scenarios in one browser, against one paced stack."""
    served = settings.model_copy(update={"web_dist": WEB_DIST})
    async with paced_stack(client, served, executor) as url:
        tag = uuid.uuid4().hex[:8]
        return await drive(url, tag, ["streaming", "stop"], agent=PACED)


def test_text_is_shown_while_it_streams(paced_ui: dict[str, Any]) -> None:
    result = passed(paced_ui, "streaming")
    assert result["finalText"] == REPLY
    seen = result["seen"]
    partial = [s for s in seen if 0 < s["length"] < len(REPLY)]
    assert partial and all(s["streaming"] for s in partial), seen
    assert len({s["length"] for s in partial}) > 1  # it grew in several steps
    assert not result["console"], result["console"]


def test_stop_keeps_the_text_shown_and_the_chat_goes_on(paced_ui: dict[str, Any]) -> None:
    result = passed(paced_ui, "stop")
    stopped = result["stoppedText"]
    assert stopped and REPLY.startswith(stopped) and stopped != REPLY  # cut where it was
    assert result["alerts"] == []  # a stop is no error
    assert result["answer"] == REPLY and result["stopButtons"] == 0
    assert result["stoppedAfterReload"] == stopped  # hydrated with its mark
    assert not result["console"], result["console"]
