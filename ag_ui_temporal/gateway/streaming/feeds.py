"""One reader per followed run in this process, however many clients follow it.

A run is read from the thread's log with the `run_events` query: quickly while
events flow, backing off to MAX_POLL while it is quiet, and cut short by the
run update's outcome (a server-side long poll) the moment the run ends. All
clients following the run (the one that started it, other tabs joining it)
share that reader, so the gateway's cost grows with running runs, not with
viewers. When the last client leaves, the reader stops.
"""

from __future__ import annotations

import asyncio
import bisect
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from temporalio.client import WorkflowHandle

from ag_ui_temporal.gateway.streaming.thread_log import Offset, read_run, run_outcome

FIRST_POLL = 0.05
"""Seconds between re-reads while events flow; doubles once nothing new arrived for..."""
QUIET = 0.2
"""...this long (two batches of a streaming model, which sends one every 100 ms)..."""
MAX_POLL = 1.0
"""...up to this."""


@dataclass(eq=False)
class Feed:
    """What this process has read of one run so far."""

    handle: WorkflowHandle[Any, Any]
    run_id: str
    brings: str | None = None
    """The run sent as `run_id` with this body (`run_digest`: the POST's own); None: the
    newest sent as `run_id` (a join)."""
    followed: str | None = None
    """What the run this feed reads brought, once the first read told (a join's too)."""
    events: list[Offset] = field(default_factory=list)
    owner: str | None = None
    """The thread's owner, as the first read told."""
    read: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the first read is in (`owner` is known)."""
    found: bool = True
    finished: bool = False
    error: BaseException | None = None
    followers: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    reader: asyncio.Task[None] | None = None

    def after(self, offset: int) -> list[Offset]:
        start = bisect.bisect_right([item.offset or 0 for item in self.events], offset)
        return self.events[start:]

    def publish(self) -> None:
        changed, self.changed = self.changed, asyncio.Event()
        changed.set()


class RunFeeds:
    def __init__(self) -> None:
        self.feeds: dict[tuple[str, str], dict[str | None, Feed]] = {}
        """(thread's workflow id, run id) -> the feeds of runs sent under it, by `brings`."""

    @property
    def readers(self) -> int:
        return sum(len(runs) for runs in self.feeds.values())

    @property
    def followers(self) -> int:
        return sum(feed.followers for runs in self.feeds.values() for feed in runs.values())

    async def follow(
        self,
        handle: WorkflowHandle[Any, Any],
        run_id: str,
        after: int,
        run_done: asyncio.Future[Any] | None = None,
        may_see: Callable[[str | None], bool] | None = None,
        brings: str | None = None,
    ) -> AsyncIterator[Offset]:
        """The run's events after offset `after`, up to its terminal event: the run the POST
        that brought `brings` sent, or (None) the newest sent as `run_id`.

        When `run_done` (the caller's own wait for the run's result) completes
        first, it returns without the terminal event: the caller sends the rest
        from that result. `may_see` is asked about the thread's owner once the
        first read is in; refused, nothing is yielded.
        """
        feed = self._enter(handle, run_id, brings, run_done)
        try:
            if may_see is not None:
                await _first(feed.read, run_done)
                if not feed.read.is_set() or not may_see(feed.owner):
                    return
            while True:
                waiting = feed.changed
                for item in feed.after(after):
                    yield item
                    after = item.offset if item.offset is not None else after
                if feed.finished:
                    return
                if feed.error is not None:
                    raise feed.error
                if run_done is not None and run_done.done():
                    return  # the caller has the whole run in the update's result
                await _first(waiting, run_done)
        finally:
            self._leave(feed)

    def _enter(
        self,
        handle: WorkflowHandle[Any, Any],
        run_id: str,
        brings: str | None,
        run_done: asyncio.Future[Any] | None,
    ) -> Feed:
        runs = self.feeds.setdefault((handle.id, run_id), {})
        feed = _shared(runs, brings)
        if feed is None:
            feed = runs[brings] = Feed(handle, run_id, brings)
            feed.reader = asyncio.create_task(_read(feed, run_done))
        feed.followers += 1
        return feed

    def _leave(self, feed: Feed) -> None:
        feed.followers -= 1
        if feed.followers == 0:
            runs = self.feeds[(feed.handle.id, feed.run_id)]
            del runs[feed.brings]
            if not runs:
                del self.feeds[(feed.handle.id, feed.run_id)]
            if feed.reader is not None:
                feed.reader.cancel()


def _shared(runs: dict[str | None, Feed], brings: str | None) -> Feed | None:
    """A feed already reading the run, among those of its run id: the POST's own; any, for a
    join (the run going on under an id is its newest: a continuation begins once the run it
    continues has ended); a join's once it read that its run brought `brings`, for a POST.
    So a run has one reader, however its followers came."""
    if (feed := runs.get(brings)) is not None:
        return feed
    if brings is None:
        return next(iter(runs.values()), None)
    join = runs.get(None)
    return join if join is not None and join.read.is_set() and join.followed == brings else None


async def _first(changed: asyncio.Event, run_done: asyncio.Future[Any] | None) -> None:
    waiter = asyncio.ensure_future(changed.wait())
    try:
        waits: list[asyncio.Future[Any]] = [waiter] if run_done is None else [waiter, run_done]
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()


async def _read(feed: Feed, run_done: asyncio.Future[Any] | None) -> None:
    """Keep `feed` up to date until its run ends (the task is cancelled when nobody follows).

    The end is signalled by the first follower's own wait for the run's result
    when it has one (the POST that started the run), else by a long poll of ours on the
    update that sent the run (the first read says which).
    """
    ended = run_done
    delay, after = FIRST_POLL, -1
    clock = asyncio.get_running_loop().time
    news = clock()
    try:
        while True:
            try:
                page = await read_run(feed.handle, feed.run_id, after, feed.brings)
            except Exception as err:  # handed to every follower, whose stream then ends
                feed.error = err
                feed.read.set()  # followers waiting for the owner learn of the error instead
                feed.publish()
                return
            feed.found, feed.finished, feed.owner = page.found, page.finished, page.owner
            feed.followed = page.brings
            feed.read.set()
            if page.events:
                start = page.first_offset
                feed.events.extend(Offset(e, start + i) for i, e in enumerate(page.events))
                after, news = start + len(page.events) - 1, clock()
            feed.publish()
            if feed.finished:
                return
            if ended is None and page.found:
                ended = run_outcome(feed.handle, feed.run_id, page.brings)
            if ended is None or ended.done():  # over (read once more), or no long poll: polling
                await asyncio.sleep(delay)
            else:
                await asyncio.wait([ended], timeout=delay)
            delay = FIRST_POLL if clock() - news < QUIET else min(delay * 2, MAX_POLL)
    finally:
        if ended is not None and ended is not run_done:
            ended.cancel()
