"""A small AG-UI client for the Python tests: POST a run, read its SSE events.

Every stream read here is kept, and validated at the end of the session with
`@ag-ui/core`'s own zod schemas (see `conftest.py`).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncGenerator
from typing import Any, NamedTuple

import httpx
from ag_ui.core import RunAgentInput
from temporalio.client import Client

from ag_ui_temporal.gateway.auth import Principal
from ag_ui_temporal.gateway.runs import to_run_request
from ag_ui_temporal.workflows.contract import (
    THREAD_QUERY,
    ThreadView,
    run_digest,
    run_update_id,
    thread_workflow_id,
)

STREAMS: list[list[dict[str, Any]]] = []
"""Every event stream the tests received, for the end-of-session validation."""


PICK_DATE = {
    "name": "pickDate",
    "description": "Ask the user to pick a date in the browser.",
    "parameters": {
        "type": "object",
        "properties": {"question": {"type": "string"}},
        "required": ["question"],
    },
}
"""The demo's frontend tool as the web UI offers it in `RunAgentInput.tools`."""


def new_id(prefix: str = "run") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


SSE_LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""How SSE ends a line; not `str.splitlines`, which also breaks on U+2028, U+0085, ..."""


def user(text: str) -> dict[str, Any]:
    return {"id": new_id("user"), "role": "user", "content": text}


def parse_sse(text: str) -> list[dict[str, Any]]:
    events = []
    for frame in text.split("\n\n"):
        # a frame may carry megabytes (a snapshot): the regex only where a CR may break lines
        lines = SSE_LINE_BREAK.split(frame) if "\r" in frame else frame.split("\n")
        data = [line[len("data: ") :] for line in lines if line.startswith("data: ")]
        if data:
            events.append(json.loads("\n".join(data)))
    return events


async def run(
    http: httpx.AsyncClient,
    thread_id: str,
    *,
    text: str | None = None,
    resume: list[dict[str, Any]] | None = None,
    parent_run_id: str | None = None,
    run_id: str | None = None,
    agent: str = "assistant",
    principal: str | None = None,
    groups: str | None = None,
    messages: list[dict[str, Any]] | None = None,
    tools: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """One run; returns its events (and checks the response is an SSE stream).

    `messages` are sent after the user's `text` (e.g. a client tool's result), `tools` as the
    client's own tools.

    `principal` is sent as `X-Principal` (the gateway's dev auth), `groups` as
    `X-Principal-Groups`."""
    body: dict[str, Any] = {
        "threadId": thread_id,
        "runId": run_id or new_id(),
        "messages": ([user(text)] if text else []) + (messages or []),
    }
    if tools is not None:
        body["tools"] = tools
    if resume is not None:
        body["resume"] = resume
    if parent_run_id is not None:
        body["parentRunId"] = parent_run_id
    headers = {"X-Principal": principal} if principal is not None else {}
    if groups is not None:
        headers["X-Principal-Groups"] = groups
    response = await http.post(f"/agents/{agent}", json=body, headers=headers or None)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(response.text)
    STREAMS.append(events)
    return events


def types(events: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in events]


def finished(events: list[dict[str, Any]]) -> dict[str, Any]:
    assert events[-1]["type"] == "RUN_FINISHED", events[-1]
    return events[-1]


def interrupts(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    outcome = finished(events)["outcome"]
    assert outcome["type"] == "interrupt", outcome
    return outcome["interrupts"]


def error(events: list[dict[str, Any]]) -> dict[str, Any]:
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"], events
    return events[-1]


def texts(events: list[dict[str, Any]]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")


def streamed_text(events: list[dict[str, Any]]) -> str:
    """The run's assistant text, checked for how it streams: per message one START, then its
    CONTENT deltas (how many is the model's business), then one END, all before the run ends."""
    end = len(events) - 1 if events[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR") else len(events)
    by_message: dict[str, list[tuple[int, str]]] = {}
    for index, event in enumerate(events):
        if event["type"].startswith("TEXT_MESSAGE_"):
            by_message.setdefault(event["messageId"], []).append((index, event["type"]))
    for seen in by_message.values():
        kinds = [kind for _, kind in seen]
        middle = len(kinds) - 2
        assert kinds == [
            "TEXT_MESSAGE_START",
            *["TEXT_MESSAGE_CONTENT"] * middle,
            "TEXT_MESSAGE_END",
        ]
        assert middle >= 1 and seen[-1][0] < end, seen
    return texts(events)


async def thread_state(client: Client, thread_id: str) -> ThreadView:
    """The thread as the workflow holds it (to prove a rejection changed nothing)."""
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    return await handle.query(THREAD_QUERY, result_type=ThreadView)


def resolve(interrupt: dict[str, Any], payload: Any) -> dict[str, Any]:
    return {"interruptId": interrupt["id"], "status": "resolved", "payload": payload}


def cancel(interrupt: dict[str, Any]) -> dict[str, Any]:
    return {"interruptId": interrupt["id"], "status": "cancelled"}


class Frame(NamedTuple):
    """One SSE frame as sent: its `id:` (or None), its JSON data (or None), its comment."""

    id: str | None
    data: dict[str, Any] | None
    comment: str | None = None

    @property
    def event(self) -> dict[str, Any]:
        """The data of a frame that carries an event."""
        assert self.data is not None, self
        return self.data


def parse_frame(raw: str) -> Frame:
    fields: dict[str, str] = {}
    comment = None
    for line in SSE_LINE_BREAK.split(raw):
        if line.startswith(":"):
            comment = line[1:].strip()
        else:
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")
    data = json.loads(fields["data"]) if "data" in fields else None
    return Frame(fields.get("id"), data, comment)


async def frames(response: httpx.Response) -> AsyncGenerator[Frame, None]:
    """Frames as they arrive on an open streaming response."""
    buffer = ""
    async for chunk in response.aiter_text():
        buffer += chunk.replace("\r\n", "\n")
        while "\n\n" in buffer:
            raw, buffer = buffer.split("\n\n", 1)
            yield parse_frame(raw)


def update_id_of(body: dict[str, Any], agent: str = "assistant") -> str:
    """The `run` update id the gateway sends for the `RunAgentInput` `body` (it depends on what
    the run brings: `contract.runs.run_digest`)."""
    request = to_run_request(agent, RunAgentInput.model_validate(body), Principal("anonymous"))
    return run_update_id(request.run_id, run_digest(request))


def copilotkit_resume(asked: list[dict[str, Any]], resume: list[dict[str, Any]]) -> dict[str, Any]:
    """`run` arguments for a resume as CopilotKit's `useInterrupt` sends it (its `run-handler`'s
    `pinRunIdOnWire`): under the run id of the run whose events `asked` are (the run that
    asked), with the transcript as that run left it (its `MESSAGES_SNAPSHOT`) and, for each
    `tool_call` interrupt, a tool message carrying the answer (`{"status": "cancelled"}` for
    a cancel). The messages' ids depend on the interrupts only: the same resume again is the
    same body."""
    [snapshot] = [e for e in asked if e["type"] == "MESSAGES_SNAPSHOT"]
    by_id = {i["id"]: i for i in finished(asked)["outcome"]["interrupts"]}
    answered = [(by_id[entry["interruptId"]], entry) for entry in resume]
    tool_messages = [
        {
            "id": f"tool-{interrupt['id']}",
            "role": "tool",
            "toolCallId": interrupt["toolCallId"],
            "content": json.dumps(entry.get("payload", {"status": "cancelled"})),
        }
        for interrupt, entry in answered
        if interrupt["reason"] == "tool_call"
    ]
    messages = [*snapshot["messages"], *tool_messages]
    return {"run_id": asked[0]["runId"], "resume": resume, "messages": messages}


def run_body(thread_id: str, text: str | None = None, **fields: Any) -> dict[str, Any]:
    body = {"threadId": thread_id, "runId": new_id(), "messages": [user(text)] if text else []}
    return {**body, **fields}
