"""The tools' effects as tests read them: a blocking read of the store's outbox.

Assertions read effects from sync and async tests alike (and from the fault harness's
checks), so the read runs on an event loop of its own, in a helper thread.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ag_ui_temporal.store import Outbox, open_engine


class EffectLog:
    """The effects recorded in the store at `url` (one row per idempotency key)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def effects(self, tool: str | None = None) -> list[dict[str, Any]]:
        """Recorded effects (key, tool, args), oldest first."""
        with ThreadPoolExecutor(max_workers=1) as thread:
            return thread.submit(asyncio.run, self._read(tool)).result()

    async def _read(self, tool: str | None) -> list[dict[str, Any]]:
        engine = open_engine(self.url)
        try:
            return await Outbox(engine).effects(tool)
        finally:
            await engine.dispose()
