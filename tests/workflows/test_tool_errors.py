"""Which activity failures count as a tool failing for good, and the result they become."""

from __future__ import annotations

import pytest
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    CancelledError,
    RetryState,
    TimeoutError,
    TimeoutType,
)

from ag_ui_temporal.workflows.thread.tool_errors import (
    MAX_ERROR_MESSAGE,
    failed_for_good,
    tool_error,
)


def activity_error(cause: BaseException) -> ActivityError:
    """An `ActivityError` as the workflow receives it: the activity's failure is its cause."""
    err = ActivityError(
        "Activity task failed",
        scheduled_event_id=5,
        started_event_id=6,
        identity="worker",
        activity_type="sendEmail",
        activity_id="2",
        retry_state=RetryState.MAXIMUM_ATTEMPTS_REACHED,
    )
    err.__cause__ = cause
    return err


@pytest.mark.parametrize(
    ("cause", "for_good"),
    [
        (ApplicationError("mail server said no", type="RuntimeError"), True),
        (ApplicationError("full", type="MailboxFull", non_retryable=True), True),
        (
            TimeoutError(
                "activity StartToClose timeout",
                type=TimeoutType.START_TO_CLOSE,
                last_heartbeat_details=[],
            ),
            True,
        ),
        (CancelledError(), False),  # the workflow is being cancelled: not the tool's failure
    ],
)
def test_what_fails_for_good(cause: BaseException, for_good: bool) -> None:
    assert failed_for_good(activity_error(cause)) is for_good


def test_the_result_names_the_type_and_a_bounded_one_line_message() -> None:
    app = ApplicationError("mailbox\nfull  " + "x" * 1000, type="MailboxFull")
    error = tool_error(activity_error(app))
    assert error["type"] == "MailboxFull"
    assert len(error["message"]) == MAX_ERROR_MESSAGE
    assert error["message"].startswith("mailbox full xx") and error["message"].endswith("…")

    timeout = TimeoutError(
        "activity StartToClose timeout", type=TimeoutType.START_TO_CLOSE, last_heartbeat_details=[]
    )
    assert tool_error(activity_error(timeout)) == {
        "type": "TimeoutError",
        "message": "activity StartToClose timeout",
    }
    untyped = tool_error(activity_error(ApplicationError("")))
    assert untyped == {"type": "ApplicationError", "message": "Activity task failed"}
