"""`AUDIT_RETENTION` on the worker: records older than the setting leave the store, and the
trail stays verifiable from where it now starts (on SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from ag_ui_temporal.audit import keep_retention
from ag_ui_temporal.store import AuditLog, AuditQuery, Reader
from ag_ui_temporal.workflows.contract.audit import AuditBatch, AuditRecord
from tests.audit_trails import AUDIT_KEYS

EVERYTHING = Reader(principal="", everything=True)


def batch(*keys: str) -> AuditBatch:
    records = [
        AuditRecord(key=key, kind="asked", at="2026-12-02T09:00:00.000Z", thread_id="t-1")
        for key in keys
    ]
    return AuditBatch(scope="thread:t-1", readers=["olivia"], records=records)


async def test_the_worker_drops_records_past_the_retention_and_the_trail_still_verifies(
    engine: AsyncEngine,
):
    log = AuditLog(engine, AUDIT_KEYS)
    assert await log.append(batch("a", "b")) == 2
    keeping = asyncio.create_task(keep_retention(log, retention=timedelta(0)))
    try:
        async with asyncio.timeout(30):
            while await log.read(AuditQuery(), EVERYTHING):
                await asyncio.sleep(0.02)
    finally:
        keeping.cancel()
    assert (await log.verify())[1] is None
    # The trail goes on from its anchor: the next record is the third, naming the second.
    assert await log.append(batch("c")) == 1
    [third] = await log.read(AuditQuery(), EVERYTHING)
    assert third.seq == 3 and (await log.verify())[1] is None
