"""Streamed text through TanStack's real `ChatClient`: the deltas arrive (and the client's
message grows) before the run ends, and the text it ends with is the one a reload hydrates."""

from __future__ import annotations

from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from temporalio.client import Client

from ag_ui_temporal.settings import Settings
from tests.agui import STREAMS
from tests.gateway.test_js_clients import said
from tests.node_clients import requires_node, run_node, streams_of
from tests.paced import PACED, REPLY, WORDS, paced_stack

pytestmark = requires_node


@pytest.fixture(scope="module")
async def paced_url(
    client: Client, settings: Settings, executor: ThreadPoolExecutor
) -> AsyncIterator[str]:
    async with paced_stack(client, settings, executor) as url:
        yield url


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in events]


async def test_chat_client_sees_the_text_grow_before_the_run_ends(paced_url: str, thread_id: str):
    result = await run_node(
        "tanstack_chat.mjs",
        {
            "url": f"{paced_url}/agents/{PACED}",
            "threadId": thread_id,
            "persistence": True,
            "steps": [{"send": "Tell me something"}, {"reload": True}],
        },
    )
    sent, reloaded = result["snapshots"]
    STREAMS.extend(streams_of(result["snapshots"]))
    assert sent["stepError"] is None and sent["error"] is None
    # on the wire: several deltas, all of them before the run's end
    [post] = [r for r in sent["requests"] if r["method"] == "POST"]
    wire = kinds(post["events"])
    deltas = [i for i, kind in enumerate(wire) if kind == "TEXT_MESSAGE_CONTENT"]
    assert 1 < len(deltas) <= len(WORDS)
    assert deltas[-1] < wire.index("TEXT_MESSAGE_END") < wire.index("RUN_FINISHED")
    # in the client: it applied each delta before the run finished, its text growing
    applied = kinds(sent["chunks"])
    assert applied.count("TEXT_MESSAGE_CONTENT") == len(deltas)
    assert max(i for i, k in enumerate(applied) if k == "TEXT_MESSAGE_CONTENT") < applied.index(
        "RUN_FINISHED"
    )
    lengths = sent["textLengths"]
    assert lengths == sorted(set(lengths)) and 0 < lengths[0] < len(REPLY) == lengths[-1]
    # the text it ended with is the one a reload hydrates
    assert said(sent) == said(reloaded) == REPLY
