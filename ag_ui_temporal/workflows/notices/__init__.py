"""Telling people from workflow code: each notice is delivered by a workflow of its own.

A workflow that has something to tell (a chain's reminders and outcome) calls `tell`, which
only starts `AguiNotification`s (one per notice key, through the `agui_start_notices`
activity) and never waits for a channel: a mail server or webhook receiver that is down
delays nothing. Each `AguiNotification` retries its channels with backoff until they take the
notice or `NOTIFY_GIVE_UP_AFTER` passes, whatever happens to the workflow that asked.
"""

from ag_ui_temporal.workflows.notices.telling import tell
from ag_ui_temporal.workflows.notices.workflow import AguiNotification

__all__ = ["AguiNotification", "tell"]
