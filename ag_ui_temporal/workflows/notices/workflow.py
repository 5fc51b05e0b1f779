"""`AguiNotification`: one notice, delivered on every channel, retried until it is taken.

Its workflow id is the notice's key, so a notice is delivered once however often it is
asked for (a retried activity, a chain replayed on another worker). The activity sends on
the channels that have not taken it yet (the store remembers which did) and fails while one
refuses, so Temporal's retry policy is the backoff.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.workflows.contract.notices import (
        NOTIFICATION_WORKFLOW,
        NOTIFY_ACTIVITY,
        NotificationInput,
    )

ATTEMPT_TIMEOUT = timedelta(minutes=2)
"""One attempt at every channel (each has its own, shorter, connection timeout)."""


@workflow.defn(name=NOTIFICATION_WORKFLOW)
class AguiNotification:
    @workflow.run
    async def run(self, input: NotificationInput) -> bool:
        """Whether every channel took the notice before it was given up."""
        try:
            await workflow.execute_activity(
                NOTIFY_ACTIVITY,
                input.notice,
                start_to_close_timeout=ATTEMPT_TIMEOUT,
                schedule_to_close_timeout=input.give_up_after,
                retry_policy=RetryPolicy(
                    initial_interval=timedelta(seconds=1),
                    backoff_coefficient=2.0,
                    maximum_interval=input.max_retry_interval,
                ),
            )
        except ActivityError as err:  # given up: the store says which channel and why
            workflow.logger.warning("notice %s given up: %s", input.notice.key, err.cause or err)
            return False
        return True
