"""`tell`: start the deliveries of some notices from workflow code, and go on."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.workflows.contract.notices import (
        START_NOTICES_ACTIVITY,
        Notice,
        Notices,
    )

START_TIMEOUT = timedelta(minutes=1)
"""How long starting the deliveries may take before the caller goes on without them."""


async def tell(notices: list[Notice], task_queue: str) -> None:
    """Start one `AguiNotification` per notice (each key once). Only Temporal is involved,
    never a channel; if even that fails for a minute the caller goes on, and the log says so."""
    if not notices:
        return
    try:
        await workflow.execute_activity(
            START_NOTICES_ACTIVITY,
            Notices(notices=notices),
            task_queue=task_queue,
            start_to_close_timeout=timedelta(seconds=20),
            schedule_to_close_timeout=START_TIMEOUT,
            retry_policy=RetryPolicy(maximum_interval=timedelta(seconds=10)),
        )
    except ActivityError as err:
        keys = ", ".join(n.key for n in notices[:5])
        workflow.logger.warning("notices %s not started: %s", keys, err.cause or err)
