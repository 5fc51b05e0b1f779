"""Answered interrupts that left a thread's state: idempotent appends, lookups by id (both
engines)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from ag_ui_temporal.store import Transcript
from ag_ui_temporal.workflows.contract import InterruptStatus
from ag_ui_temporal.workflows.contract.replay import ArchivedInterrupt
from ag_ui_temporal.workflows.contract.resume import answer_digest


def settled(n: int, resolvers: list[str] | None = None) -> dict[str, object]:
    record = ArchivedInterrupt(
        interrupt_id=f"int-{n}",
        run_id=f"run-{n}",
        status=InterruptStatus.RESOLVED,
        answer_digest=answer_digest("resolved", {"approved": True, "n": n}),
        resolved_by_run=f"run-{n + 1}",
        allowed_resolvers=resolvers,
    )
    return record.model_dump(mode="json")


async def test_append_twice_keeps_the_first_and_reads_back_by_id(engine: AsyncEngine):
    transcript = Transcript(engine)
    batch = [settled(0), settled(1, ["carol", "group:finance"])]
    await transcript.append_interrupts("t1", batch)
    await transcript.append_interrupts("t1", batch)  # a retried activity
    await transcript.append_interrupts("t1", [{**settled(0), "status": "cancelled"}])
    await transcript.append_interrupts("t2", [settled(0)])
    found = await transcript.settled("t1", ["int-1", "int-0", "int-9"])
    assert sorted(found, key=lambda row: str(row["interrupt_id"])) == batch
    assert await transcript.settled("t1", []) == []
    assert await transcript.settled("t3", ["int-0"]) == []
    assert [ArchivedInterrupt.model_validate(row) for row in found]  # the gateway's model
