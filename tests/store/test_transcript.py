"""The transcript archive: idempotent appends, pages back to the first message (both engines)."""

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from ag_ui_temporal.store import Transcript, TranscriptConflict
from ag_ui_temporal.store.transcript import MAX_EVENTS, MAX_PAGE


def message(n: int) -> dict[str, object]:
    return {"id": f"m{n}", "role": "user" if n % 2 else "assistant", "content": f"text {n}"}


async def test_append_twice_is_a_no_op(engine: AsyncEngine):
    transcript = Transcript(engine)
    batch = [message(n) for n in range(3)]
    await transcript.append_messages("t1", batch, first_seq=0)
    await transcript.append_messages("t1", batch, first_seq=0)  # a retried activity
    await transcript.append_messages("t1", batch[1:], first_seq=1)  # an overlapping window
    assert await transcript.count("t1") == 3
    assert await transcript.count("t2") == 0
    page = await transcript.page("t1", limit=10)
    assert (page.messages, page.first_seq, page.cursor) == (batch, 0, None)


async def test_conflicting_append_writes_nothing(engine: AsyncEngine):
    transcript = Transcript(engine)
    await transcript.append_messages("t1", [message(0), message(1)], first_seq=0)
    with pytest.raises(TranscriptConflict):  # another message at position 1
        await transcript.append_messages("t1", [message(9), message(2)], first_seq=1)
    with pytest.raises(TranscriptConflict):  # a stored message at another position
        await transcript.append_messages("t1", [message(2), message(0)], first_seq=2)
    assert [m["id"] for m in (await transcript.page("t1", limit=10)).messages] == ["m0", "m1"]


async def test_pages_back_to_the_first_message(engine: AsyncEngine):
    transcript = Transcript(engine)
    everything = [message(n) for n in range(1234)]
    for start in range(0, len(everything), 1000):
        await transcript.append_messages("t1", everything[start : start + 1000], start)
    await transcript.append_messages("other", [message(0)], 0)
    pages, cursor = [], None
    while True:
        page = await transcript.page("t1", limit=100, before_seq=cursor)
        pages.append(page.messages)
        if page.cursor is None:
            break
        cursor = page.cursor
    assert [len(p) for p in pages] == [100] * 12 + [34]
    assert [m for p in reversed(pages) for m in p] == everything
    assert await transcript.count("t1") == 1234


async def test_reads_are_bounded(engine: AsyncEngine):
    transcript = Transcript(engine)
    with pytest.raises(ValueError):
        await transcript.page("t1", limit=MAX_PAGE + 1)
    with pytest.raises(ValueError):
        await transcript.events_between("t1", 0, MAX_EVENTS + 1)
    empty = await transcript.page("t1", limit=MAX_PAGE)
    assert (empty.messages, empty.first_seq, empty.cursor) == ([], None, None)


async def test_events_append_idempotent_and_read_by_offset(engine: AsyncEngine):
    transcript = Transcript(engine)
    run1 = [{"type": "RUN_STARTED", "n": n} for n in range(4)]
    await transcript.append_events("t1", "run-1", run1, first_offset=0)
    await transcript.append_events("t1", "run-1", run1, first_offset=0)
    await transcript.append_events("t1", "run-2", [{"type": "RUN_FINISHED"}], first_offset=4)
    between = await transcript.events_between("t1", 2, 5)
    assert [(e.offset, e.run_id, e.event) for e in between] == [
        (2, "run-1", run1[2]),
        (3, "run-1", run1[3]),
        (4, "run-2", {"type": "RUN_FINISHED"}),
    ]
    assert await transcript.events_between("t1", 5, 9) == []


async def test_positions_and_a_run_s_events(engine: AsyncEngine):
    transcript = Transcript(engine)
    await transcript.append_messages("t1", [message(0), message(1)], first_seq=0)
    assert await transcript.positions("t1", ["m1", "m7"]) == {"m1": 1}
    await transcript.append_events("t1", "r1", [{"type": "RUN_STARTED"}], first_offset=4)
    await transcript.append_events("t1", "r2", [{"type": "A"}, {"type": "B"}], first_offset=5)
    events = await transcript.run_events("t1", "r2")
    assert [(e.offset, e.event["type"]) for e in events] == [(5, "A"), (6, "B")]
    assert await transcript.run_events("t2", "r2") == []
