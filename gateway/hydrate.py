"""Thread hydration in TanStack AI's shape: `GET /agents/{agent}?threadId=T`.

The thread's AG-UI transcript becomes TanStack `UIMessage`s the way
`@tanstack/ai`'s `modelMessagesToUIMessages` builds them (tool results merge
into the assistant message that called the tool), and the open interrupts come
back bound to the run that delivered them, so a reloaded page can resolve them.

Pages: without `before`, the thread's window (its newest messages, no database read),
or its newest `limit`; `page.cursor` (opaque: `p<position>`) as `before` reads the
`limit` (else `OLDER_PAGE`) messages before it, from the window and the store's
transcript archive, back to the first message. A page is cut by AG-UI messages, so a
tool result on the far side of a cut shows as a message of its own.

Another principal's thread (or another agent's) hydrates as one that does not exist
(empty), decided from the thread's memo before the thread is queried (`gateway.access`).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from temporalio.service import RPCError, RPCStatusCode

from ag_ui_temporal.gateway.access import Seen, may_see, thread_access
from ag_ui_temporal.gateway.auth import Principal
from ag_ui_temporal.gateway.streaming.bindings import bind_interrupt
from ag_ui_temporal.workflows.contract import THREAD_QUERY, ThreadView, WireDict

if TYPE_CHECKING:
    from temporalio.client import WorkflowHandle

    from ag_ui_temporal.store import Transcript

OLDER_PAGE = 100
"""Messages of a `before` page when the client names no `limit`."""
ARCHIVE_PAGE = 500
"""Messages per archive read (the store's most)."""
_CURSOR = re.compile(r"p(0|[1-9][0-9]{0,11})")


class BadCursor(ValueError):
    """A `before` this server never gave (or one past the thread's end)."""


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


async def hydrate_thread(
    handle: WorkflowHandle[Any, Any],
    thread_id: str,
    agent: str,
    principal: Principal,
    admin: bool,
    page: tuple[int | None, str | None],
    transcript: Transcript,
) -> ThreadHydration:
    """Thread `thread_id` (`handle`'s) as `principal` may see it on `agent`'s URL: empty for
    a thread that does not exist and, at the same cost (no query), for anyone else's.
    `page` is `(limit, before)`; raises `BadCursor` for a `before` this server did not give."""
    seen = await thread_access(handle, thread_id, principal, admin, expected_agent=agent)
    if seen is Seen.NO:
        return ThreadHydration()
    try:
        thread: ThreadView = await handle.query(THREAD_QUERY, result_type=ThreadView)
    except RPCError as err:
        if err.status != RPCStatusCode.NOT_FOUND:
            raise
        return ThreadHydration()  # an unknown thread is an empty one
    owner = thread.effective_owner  # threads older than the memo are decided here
    if not may_see(principal, owner, admin=admin, agent=thread.agent, expected_agent=agent):
        return ThreadHydration()
    return await hydrate(thread, *page, transcript)


async def hydrate(
    thread: ThreadView, limit: int | None, before: str | None, transcript: Transcript
) -> ThreadHydration:
    """Raises `BadCursor` for a `before` this server did not give."""
    messages, page = await _page(thread, limit, before, transcript)
    active = thread.active_run
    awaiting = thread.awaiting
    pending = None
    if awaiting:
        run_id = awaiting[-1].run_id  # one batch: every awaiting interrupt came from one run
        pending = PendingInterrupts(
            run_id=run_id,
            pending=[bind_interrupt(r.interrupt, r.run_id) for r in awaiting if r.run_id == run_id],
        )
    return ThreadHydration(
        messages=messages,
        active_run=ActiveRun(run_id=active.run_id) if active and not pending else None,
        interrupts=pending,
        page=page,
    )


async def _page(
    thread: ThreadView, limit: int | None, before: str | None, transcript: Transcript
) -> tuple[list[WireDict], WholePage | TruncatedPage]:
    """Messages at positions [start, end): the newest `limit` before the cursor."""
    archived = thread.archived
    total = archived + len(thread.messages)
    end = total if before is None else _position(before, total)
    if limit is None:
        start = archived if before is None else max(end - OLDER_PAGE, 0)
    else:
        start = max(end - limit, 0)
    messages = await _archived(transcript, thread.thread_id, start, min(end, archived))
    messages += thread.messages[max(start - archived, 0) : max(end - archived, 0)]
    ui = to_ui_messages(messages)
    return ui, TruncatedPage(cursor=f"p{start}") if start > 0 else WholePage()


def _position(cursor: str, total: int) -> int:
    match = _CURSOR.fullmatch(cursor)
    if match is None or not 0 < int(match.group(1)) <= total:
        raise BadCursor(cursor)
    return int(match.group(1))


async def _archived(transcript: Transcript, thread_id: str, start: int, end: int) -> list[WireDict]:
    """The archived messages at positions [start, end), oldest first."""
    pages: list[list[WireDict]] = []
    cursor: int | None = end
    while cursor is not None and cursor > start:
        page = await transcript.page(thread_id, min(cursor - start, ARCHIVE_PAGE), cursor)
        if not page.messages:
            break
        pages.append(page.messages)
        cursor = page.cursor
    return [message for page in reversed(pages) for message in page]


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
