"""The thread's window, pure parts: what is new, what is refused, what leaves and when."""

from __future__ import annotations

from ag_ui_temporal.workflows.contract import (
    MAX_MESSAGE_BYTES,
    THREAD_WINDOW_BYTES,
    ErrorCode,
    json_size,
)
from ag_ui_temporal.workflows.contract.transcript import ARCHIVE_BATCH_BYTES, LOG_TAIL_BYTES
from ag_ui_temporal.workflows.thread import _window
from ag_ui_temporal.workflows.thread.state import RunRecord, ThreadState


def message(n: int, size: int = 10) -> dict[str, object]:
    return {"id": f"m{n}", "role": "user", "content": "x" * size}


def thread(**fields: object) -> ThreadState:
    return ThreadState.model_validate({"thread_id": "t", "agent": "assistant", **fields})


def test_once_archived_a_re_sent_transcript_brings_only_what_follows_the_window() -> None:
    state = thread(messages=[message(3), message(4)], archived=3)
    sent = [message(0), message(1), message(3), message(4), message(5)]
    assert _window.unseen(state, sent) == [message(5)]
    assert _window.unseen(state, [message(1)]) == [message(1)]  # alone: taken as new
    assert _window.unseen(thread(messages=[message(3)]), sent) == [
        m for m in sent if m["id"] != "m3"
    ]


def test_what_cannot_be_stored_is_refused() -> None:
    state = thread()
    refused = _window.refusal(state, [message(0, MAX_MESSAGE_BYTES)])
    assert refused is not None and refused.code == ErrorCode.LIMIT_EXCEEDED
    assert "MAX_MESSAGE_BYTES" in refused.message
    assert _window.refusal(state, [message(0, 1000)]) is None
    assert (
        _window.refusal(state, [{"id": "a", "role": "assistant", "content": "x" * 10**6}]) is None
    )


def test_the_window_overflows_down_to_half_its_budget_in_bounded_batches() -> None:
    size = 100_000
    state = thread(messages=[message(n, size) for n in range(8)], archived=5)
    assert _window.overflow(thread(messages=[message(0, size)])) == 0
    count = _window.overflow(state)
    left = state.messages[count:]
    assert (
        sum(json_size(m) for m in left)
        <= THREAD_WINDOW_BYTES // 2
        < sum(json_size(m) for m in state.messages[count - 1 :])
    )
    batches = _window.batches(state, count)
    assert batches[0].first_seq == 5
    assert sum(len(b.messages) for b in batches) == count
    assert all(json_size(b.messages) <= ARCHIVE_BATCH_BYTES for b in batches)


def test_the_log_keeps_fewer_runs_when_theirs_weigh_more() -> None:
    big = {"type": "TEXT_MESSAGE_CONTENT", "delta": "x" * (LOG_TAIL_BYTES // 3)}
    runs = [
        RunRecord(run_id=f"r{n}", first_offset=n, last_offset=n, finished=True) for n in range(6)
    ]
    state = thread(runs=runs, events=[big] * 6)
    assert _window.runs_kept(state) == 2
    leaving = _window.leaving_events(state)
    assert [(b.run_id, b.first_offset) for b in leaving] == [(f"r{n}", n) for n in range(4)]
    small = thread(runs=runs, events=[{"type": "RUN_STARTED"}] * 6)
    assert _window.runs_kept(small) == 6 and _window.leaving_events(small) == []
