"""The Google ADK comparison's peer (bench/adk_agent.py) answers AG-UI as the example does:
the example's agent on ADK's own `Runner` asks before each `sendEmail`, each interrupt's id is
the ADK request it answers (a resume needs nothing but the session), and an approved email is
recorded in its outbox, a declined one not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from ag_ui_temporal.agents import registry
from ag_ui_temporal.examples.agents import adk_email

ASK = "Send an email to ada@example.com saying hi"


def events(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text
    return [json.loads(line[len("data: ") :]) for line in response.text.split("\n\n") if line]


async def test_the_peer_asks_and_sends_once_approved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # importing the bench's module registers the example again on its instant model: the
    # example's own (registered by importing it) comes back after this test
    monkeypatch.setitem(registry._SERVED, adk_email.NAME, registry._SERVED[adk_email.NAME])
    from bench import adk_agent
    from bench.graph_agent import peer_outbox

    app = adk_agent.build_app(str(tmp_path / "peer.store.sqlite3"))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://peer") as http:

            async def run(thread: str, **body: Any) -> list[dict[str, Any]]:
                sent = {"threadId": thread, "runId": f"run-{thread}", "messages": [], **body}
                return events(await http.post("/agent", json=sent))

            async def resume(thread: str, approved: bool) -> list[dict[str, Any]]:
                asked = await run(thread, messages=[{"id": "m", "role": "user", "content": ASK}])
                assert asked[-1]["outcome"]["type"] == "interrupt"
                [interrupt] = asked[-1]["outcome"]["interrupts"]
                answer = {"interruptId": interrupt["id"], "payload": {"approved": approved}}
                return await run(thread, resume=[answer])

            declined = await resume("no", approved=False)
            approved = await resume("yes", approved=True)
    said = [event["delta"] for event in [*declined, *approved] if "delta" in event]
    assert said[0].startswith("I did not send the email")
    assert said[1] == "Sent the email to ada@example.com."
    assert approved[-1]["outcome"] == {"type": "success"}
    outbox = await peer_outbox(tmp_path / "peer.store.sqlite3")
    [sent] = await outbox.effects()
    assert (sent["tool"], sent["args"]["to"]) == ("sendEmail", "ada@example.com")
