"""The chaos task: SIGKILL one of the processes at seeded random moments, then restart it.

Some flows are *held* for a given kill: they wait with their interrupt open until that kill
happened, then resolve it while the process is down or coming back. Before each kill the chaos
waits until every flow held for it is paused at its interrupt, so each kill lands while flows
are in flight and every kill has open interrupts that must stay resolvable across it.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from dataclasses import dataclass, field
from functools import partial

from tests.faults.processes import Stack


def kill_plan(kills: int, rng: random.Random, processes: tuple[str, ...]) -> list[str]:
    """Which process each kill hits: every process as evenly as `kills` allows, shuffled."""
    plan = [processes[i % len(processes)] for i in range(kills)]
    rng.shuffle(plan)
    return plan


@dataclass
class Chaos:
    stack: Stack
    plan: list[str]
    gaps: list[float]
    """Seconds before each kill (after the previous process is back)."""
    held: Counter[int]
    """Flows held for each kill (1-based)."""
    paused: Counter[int] = field(default_factory=Counter)
    killed: int = 0
    """Kills done so far (the process is dead; it may not be back yet)."""
    kills: Counter[str] = field(default_factory=Counter)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def pause(self, kill: int) -> None:
        """A flow held for `kill` is at its interrupt (or failed before: it cannot block us)."""
        async with self.changed:
            self.paused[kill] += 1
            self.changed.notify_all()

    async def wait_for_kill(self, kill: int) -> str:
        """Wait until kill number `kill` happened; the process it hit."""
        async with self.changed:
            await self.changed.wait_for(lambda: self.killed >= kill)
        return self.plan[kill - 1]

    def _all_paused(self, kill: int) -> bool:
        return self.paused[kill] >= self.held[kill]

    async def run(self) -> None:
        for kill, (name, gap) in enumerate(zip(self.plan, self.gaps, strict=True), start=1):
            await asyncio.sleep(gap)  # the random moment
            async with self.changed:
                await self.changed.wait_for(partial(self._all_paused, kill))
            service = self.stack.services[name]
            await service.kill()
            async with self.changed:
                self.killed, self.kills[name] = kill, self.kills[name] + 1
                self.changed.notify_all()
            await service.start()
