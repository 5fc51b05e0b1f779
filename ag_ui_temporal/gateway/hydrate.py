"""Hydrating a thread: `GET /agents/{agent}?threadId=T`, which page, and who may read it.

The answer is in TanStack AI's shape (`gateway.tanstack.hydration`: `UIMessage`s, the
open interrupts bound to their run); this module picks the AG-UI messages it is made of.

Pages: without `before`, the thread's window (its newest messages, no database read),
or its newest `limit`; `page.cursor` (opaque: `p<position>`) as `before` reads the
`limit` (else `OLDER_PAGE`) messages before it, from the window and the store's
transcript archive, back to the first message. A page is cut by AG-UI messages, so a
tool result on the far side of a cut shows as a message of its own.

Another principal's thread (or another agent's) hydrates as one that does not exist
(empty), decided from the thread's memo before the thread is queried (`gateway.access`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ag_ui_temporal.gateway.access import Access
from ag_ui_temporal.gateway.auth import Principal
from ag_ui_temporal.gateway.tanstack import ThreadHydration, thread_hydration
from ag_ui_temporal.workflows.contract import ThreadView, WireDict

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
    thread = await Access(principal, admin, expected_agent=agent).view(handle, thread_id)
    if thread is None:
        return ThreadHydration()
    return await hydrate(thread, *page, transcript)


async def hydrate(
    thread: ThreadView, limit: int | None, before: str | None, transcript: Transcript
) -> ThreadHydration:
    """Raises `BadCursor` for a `before` this server did not give."""
    messages, start = await _page(thread, limit, before, transcript)
    return thread_hydration(thread, messages, f"p{start}" if start > 0 else None)


async def _page(
    thread: ThreadView, limit: int | None, before: str | None, transcript: Transcript
) -> tuple[list[WireDict], int]:
    """Messages at positions [start, end) and `start`: the newest `limit` before the cursor."""
    archived = thread.archived
    total = archived + len(thread.messages)
    end = total if before is None else _position(before, total)
    if limit is None:
        start = archived if before is None else max(end - OLDER_PAGE, 0)
    else:
        start = max(end - limit, 0)
    messages = await _archived(transcript, thread.thread_id, start, min(end, archived))
    messages += thread.messages[max(start - archived, 0) : max(end - archived, 0)]
    return messages, start


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
