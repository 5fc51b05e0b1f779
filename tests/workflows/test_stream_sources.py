"""Which model activity's deltas a response shows (`RunWriter`'s `_current`): a stopped run's
model activity goes on publishing until it hears of the stop, possibly into the next run's
response, whose activity is a later one."""

from __future__ import annotations

from ag_ui_temporal.workflows.thread.agents._llm_writer import _current, _Response


def test_a_stopped_requests_activity_is_not_shown_in_the_next_response() -> None:
    seen_before_the_stop = {"7"}
    response = _Response(message_id="msg-1")
    assert not _current(response, "7", 1, seen_before_the_stop)
    assert _current(response, "9", 1, seen_before_the_stop)
    assert not _current(response, "7", 1, seen_before_the_stop)


def test_a_later_activity_takes_over_from_an_earlier_one() -> None:
    response = _Response(message_id="msg-1")
    assert _current(response, "7", 1, set())  # a stopped request's, never seen before
    assert _current(response, "9", 1, set())  # the request in flight: it counts from now on
    assert not _current(response, "7", 1, set())
    assert response.activity_id == "9"


def test_a_retry_of_the_same_activity_is_still_current() -> None:
    response = _Response(message_id="msg-1")
    assert _current(response, "9", 1, set())
    assert _current(response, "9", 2, set())
    assert not _current(response, "9", 1, set())  # the failed attempt's late batch
