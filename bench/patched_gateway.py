"""The gateway with the fixes bench proposes, applied at run time (no file of the gateway
is edited): `python -m bench.patched_gateway` in place of `ag-ui-temporal gateway`, for
before/after numbers in one bench run (`--gateway-command`). Each fix is one FIX_* flag
(environment `BENCH_FIXES=spin,deps`, default all) so their effects can be told apart.

- spin: `RunFeeds.follow` loops without awaiting anything once the caller's run update
  has its result but the feed has not yet read the end of the run (`_first` returns at
  once because `run_done` is done): the follower spins, creating a task and an
  `asyncio.wait` per turn, until the reader's next query lands. Fix: once `run_done` is
  done, stop following; `_run_events` then sends the rest from the update's result.
- deps: every FastAPI dependency of `POST /agents/{agent}` (`get_client`, `get_settings`,
  `get_feeds`, `known_agent`, `run_input`, `event_offset`) is a plain `def`, so FastAPI
  runs each in the thread pool: six thread hops per request. Fix: `async def`.
- poll: a run still going after QUICK_RUN (50 ms; every run once the server is busy)
  starts a reader that queries the workflow (a query task on the worker, a round trip
  through the server) after 10, 20, 40, 80 ms..., plus a second long poll of the same run
  update the caller already awaits. Under load that multiplies the server's work per
  resume. Fix tried here: QUICK_RUN 0.25 s and FIRST_POLL 0.1 s (environment
  BENCH_QUICK_RUN / BENCH_FIRST_POLL); see the report for the structural fix.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import AsyncIterator, Callable
from typing import Any

import uvicorn
from fastapi import FastAPI

from gateway import feeds
from gateway.main import create_app
from gateway.routes import agents
from gateway.stream import Offset
from settings import get_settings

FIXES = set(os.environ.get("BENCH_FIXES", "spin,deps,poll").split(","))


async def follow(
    self: feeds.RunFeeds,
    handle: object,
    run_id: str,
    after: int,
    run_done: asyncio.Future[object] | None = None,
) -> AsyncIterator[Offset]:
    feed = self._enter(handle, run_id)  # type: ignore[arg-type]
    try:
        while True:
            waiting = feed.changed
            for item in feed.after(after):
                yield item
                after = item.offset if item.offset is not None else after
            if feed.finished:
                return
            if feed.error is not None:
                raise feed.error
            if run_done is not None and run_done.done():  # the fix: was `... and not feed.found`
                return
            await feeds._first(waiting, run_done)
    finally:
        self._leave(feed)


def as_async(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The same dependency as an `async def` (same parameters), so FastAPI calls it inline."""

    async def dependency(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    dependency.__signature__ = inspect.signature(fn, eval_str=True)  # type: ignore[attr-defined]
    dependency.__name__ = fn.__name__
    return dependency


def patch_deps(app: FastAPI) -> None:
    """Every sync dependency of the agent routes, wrapped as async (whatever it does now)."""
    seen: set[Callable[..., Any]] = set()
    for route in agents.router.routes:
        for dep in (
            getattr(route, "dependant", None).dependencies if hasattr(route, "dependant") else []
        ):
            stack = [dep]
            while stack:
                d = stack.pop()
                stack.extend(d.dependencies)
                call = d.call
                if call is not None and call not in seen and not inspect.iscoroutinefunction(call):
                    if inspect.isfunction(call) and not inspect.isgeneratorfunction(call):
                        seen.add(call)
                        app.dependency_overrides[call] = as_async(call)


def main() -> None:
    settings = get_settings()
    if "spin" in FIXES:
        feeds.RunFeeds.follow = follow  # type: ignore[method-assign]
    if "poll" in FIXES:
        from gateway import runs

        runs.QUICK_RUN = float(os.environ.get("BENCH_QUICK_RUN", "0.25"))
        feeds.FIRST_POLL = float(os.environ.get("BENCH_FIRST_POLL", "0.1"))
    app = create_app(settings)
    if "deps" in FIXES:
        patch_deps(app)
    uvicorn.run(app, host=settings.gateway_host, port=settings.gateway_port, log_level="info")


if __name__ == "__main__":
    main()
