"""Thread hydration in TanStack AI's shape: what `GET /agents/{agent}?threadId=T` answers.

The thread's AG-UI transcript becomes TanStack `UIMessage`s the way
`@tanstack/ai`'s `modelMessagesToUIMessages` builds them (tool results merge
into the assistant message that called the tool), and the open interrupts come
back bound to the run that delivered them, so a reloaded page can resolve them.
Which page of the transcript, and who may read it, the gateway decides
(`gateway/hydrate.py`).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from ag_ui_temporal.gateway.tanstack.bindings import bind_interrupt
from ag_ui_temporal.workflows.contract import ThreadView, WireDict

__all__ = [
    "ActiveRun",
    "PendingInterrupts",
    "ThreadHydration",
    "TruncatedPage",
    "WholePage",
    "thread_hydration",
    "to_ui_messages",
]


class CamelModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class ActiveRun(CamelModel):
    run_id: str


class PendingInterrupts(CamelModel):
    run_id: str
    """The run that delivered them: their bindings' `interruptedRunId`."""
    pending: list[WireDict]


class WholePage(CamelModel):
    truncated: Literal[False] = False


class TruncatedPage(CamelModel):
    truncated: Literal[True] = True
    cursor: str
    """Pass as `before` to read the older messages."""


class ThreadHydration(CamelModel):
    """What TanStack's `ChatClient` (`persistence: true`) reads on page load."""

    messages: list[WireDict] = Field(default_factory=list)
    active_run: ActiveRun | None = None
    interrupts: PendingInterrupts | None = None
    page: WholePage | TruncatedPage = Field(default_factory=WholePage)


def thread_hydration(
    thread: ThreadView, messages: list[WireDict], cursor: str | None, now: datetime | None = None
) -> ThreadHydration:
    """`thread`'s AG-UI `messages` (one page of its transcript) as TanStack hydrates them;
    `cursor` is the `before` of the older page, None when the page reaches the first
    message. Pending interrupts take the place of the active run: the client resolves them
    first. An expired one is not pending (TanStack would block new input behind it): past its
    `expiresAt` at `now` (default: the time now) the thread takes no answer to it, only new
    input; the transcript says it expired (the agent's own), its owner hears so (an offer's)."""
    ui = to_ui_messages(messages)
    active = thread.active_run
    awaiting = thread.awaiting_at(now or datetime.now(UTC))
    pending = None
    if awaiting:
        run_id = awaiting[-1].run_id  # one batch: every awaiting interrupt came from one run
        pending = PendingInterrupts(
            run_id=run_id,
            pending=[bind_interrupt(r.interrupt, r.run_id) for r in awaiting if r.run_id == run_id],
        )
    return ThreadHydration(
        messages=ui,
        active_run=ActiveRun(run_id=active.run_id) if active and not pending else None,
        interrupts=pending,
        page=TruncatedPage(cursor=cursor) if cursor is not None else WholePage(),
    )


def to_ui_messages(messages: list[WireDict]) -> list[WireDict]:
    """AG-UI messages -> TanStack `UIMessage`s (as `modelMessagesToUIMessages` does)."""
    result: list[WireDict] = []
    assistant: WireDict | None = None
    for message in messages:
        if message["role"] == "tool" and assistant is not None:
            _merge_tool_result(assistant, message)
            continue
        ui = _ui_message(message)
        result.append(ui)
        assistant = ui if message["role"] == "assistant" else None
    return result


def _ui_message(message: WireDict) -> WireDict:
    role = message["role"]
    if role == "tool":
        return {"id": message["id"], "role": "assistant", "parts": [_tool_result(message)]}
    parts: list[WireDict] = []
    content = message.get("content")
    if isinstance(content, list):
        parts.extend(_content_part(part) for part in content)
    elif content:
        parts.append({"type": "text", "content": content})
    for call in message.get("toolCalls") or []:
        parts.append(_tool_call(call))
    ui_role = role if role in ("user", "assistant") else "system"
    ui: WireDict = {"id": message["id"], "role": ui_role, "parts": parts}
    if message.get("name") is not None:
        ui["name"] = message["name"]
    if isinstance(message.get("metadata"), dict):  # as TanStack maps a snapshot's message
        ui["metadata"] = message["metadata"]  # (e.g. `ag-ui-temporal:stopped`)
    return ui


def _content_part(part: WireDict) -> WireDict:
    if part.get("type") == "text":
        return {"type": "text", "content": part.get("text", "")}
    return part


def _tool_call(call: WireDict) -> WireDict:
    arguments = call["function"]["arguments"]
    part: WireDict = {
        "type": "tool-call",
        "id": call["id"],
        "name": call["function"]["name"],
        "arguments": arguments,
        "state": "input-complete",
    }
    parsed = _parse(arguments)
    if parsed is not _UNPARSED:
        part["input"] = parsed
    return part


def _tool_result(message: WireDict) -> WireDict:
    part: WireDict = {
        "type": "tool-result",
        "toolCallId": message["toolCallId"],
        "content": message.get("content") or "",
        "state": "error" if message.get("error") is not None else "complete",
    }
    if message.get("error") is not None:
        part["error"] = message["error"]
    return part


def _merge_tool_result(assistant: WireDict, message: WireDict) -> None:
    result = _tool_result(message)
    if message["id"] != assistant["id"]:
        result = {**result, "id": message["id"]}
    for part in assistant["parts"]:
        if part["type"] == "tool-call" and part["id"] == message["toolCallId"]:
            content = result["content"]
            parsed = _parse(content) if isinstance(content, str) else content
            part["output"] = content if parsed is _UNPARSED else parsed
            part["state"] = result["state"]
    assistant["parts"].append(result)


_UNPARSED: Any = object()


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return _UNPARSED
