"""A tool that failed for good: what counts as that, and the result the agent gets.

A tool's activity fails for good when Temporal stops retrying it: its retry policy
is exhausted (`AgentConfig.tool_max_attempts`, each attempt an error or a timeout)
or it raised a non-retryable `ApplicationError`. Then the failure becomes the
call's result, `{"error": {"type", "message"}}`, so the model and the user see it
and the run goes on. Anything else stays what it was: a cancelled activity is the
workflow being cancelled, and a bug in workflow code fails the workflow task
(a fixed deploy resumes it), never a tool result.
"""

from __future__ import annotations

from temporalio.exceptions import ActivityError, ApplicationError, FailureError
from temporalio.exceptions import TimeoutError as ActivityTimeout

from ag_ui_temporal.workflows.contract import WireDict

MAX_ERROR_MESSAGE = 300
"""Characters of the error's message the result keeps (one line, no stack trace)."""


def failed_for_good(err: ActivityError) -> bool:
    """Temporal gave up on the activity: retries exhausted or a non-retryable error."""
    return isinstance(err.cause, ApplicationError | ActivityTimeout)


def tool_error(err: ActivityError) -> WireDict:
    """What failed, for the model and the user: the error's type and a bounded message."""
    cause = err.cause
    kind = cause.type if isinstance(cause, ApplicationError) else None
    text = cause.message if isinstance(cause, FailureError) else ""
    message = " ".join((text or err.message).split())  # one line
    if len(message) > MAX_ERROR_MESSAGE:
        message = message[: MAX_ERROR_MESSAGE - 1] + "…"
    return {"type": kind or type(cause).__name__, "message": message}
