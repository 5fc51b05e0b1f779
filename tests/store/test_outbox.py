"""The outbox keeps one effect per key, even when two workers race on it (both engines)."""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncEngine

from ag_ui_temporal.store import Outbox, open_engine


async def test_record_once_then_the_first_result(engine: AsyncEngine):
    outbox = Outbox(engine)
    first = await outbox.record("call-1", "sendEmail", {"to": "ada@example.com"}, {"n": 1})
    again = await outbox.record("call-1", "sendEmail", {"to": "ada@example.com"}, {"n": 2})
    assert (first.first_time, first.result) == (True, {"n": 1})
    assert (again.first_time, again.result) == (False, {"n": 1})
    assert await outbox.effects() == [
        {"key": "call-1", "tool": "sendEmail", "args": {"to": "ada@example.com"}}
    ]


async def test_once_per_key_across_two_workers(store_url: str):
    """Two engines (two workers' pools) attempt the same keys at once: one row per key,
    one first attempt, and every attempt returns the first attempt's result."""
    workers = [open_engine(store_url), open_engine(store_url)]
    try:
        outboxes = [Outbox(engine) for engine in workers]
        attempts = [
            outboxes[n % 2].record(f"key-{k}", "sendEmail", {"k": k}, {"attempt": n})
            for k in range(5)
            for n in range(6)
        ]
        results = await asyncio.gather(*attempts)
        effects = await outboxes[0].effects("sendEmail")
    finally:
        await asyncio.gather(*(engine.dispose() for engine in workers))
    for k in range(5):
        mine = results[k * 6 : (k + 1) * 6]
        assert sum(r.first_time for r in mine) == 1
        assert len({r.result["attempt"] for r in mine}) == 1
    assert sorted(e["key"] for e in effects) == [f"key-{k}" for k in range(5)]


async def test_effects_by_tool_oldest_first(engine: AsyncEngine):
    outbox = Outbox(engine)
    for key, tool in [("b", "sendEmail"), ("a", "fileQuarterlyReport"), ("c", "sendEmail")]:
        await outbox.record(key, tool, {}, {})
    assert [e["key"] for e in await outbox.effects()] == ["b", "a", "c"]
    assert [e["key"] for e in await outbox.effects("sendEmail")] == ["b", "c"]
