"""The bench's billable-action count follows Temporal Cloud's rules (docs.temporal.io/cloud/
actions): the capacity model's Cloud figures rest on it."""

from __future__ import annotations

from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType as E
from temporalio.api.history.v1 import (
    ActivityTaskStartedEventAttributes,
    HistoryEvent,
    MarkerRecordedEventAttributes,
    UpsertWorkflowSearchAttributesEventAttributes,
)

from bench.actions import billable_actions


def event(kind: int, **attributes: object) -> HistoryEvent:
    return HistoryEvent(event_type=kind, **attributes)  # type: ignore[arg-type]


def upsert(*names: str) -> HistoryEvent:
    attributes = UpsertWorkflowSearchAttributesEventAttributes()
    for name in names:
        attributes.search_attributes.indexed_fields[name].CopyFrom(Payload(data=b'"x"'))
    return event(
        E.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
        upsert_workflow_search_attributes_event_attributes=attributes,
    )


def local_activity(task: int) -> HistoryEvent:
    marker = MarkerRecordedEventAttributes(
        marker_name="core_local_activity", workflow_task_completed_event_id=task
    )
    return event(E.EVENT_TYPE_MARKER_RECORDED, marker_recorded_event_attributes=marker)


def test_an_update_with_start_and_an_activity_retried_twice() -> None:
    started = ActivityTaskStartedEventAttributes(attempt=3)
    history = [
        event(E.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED),  # 1
        event(E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED),
        event(E.EVENT_TYPE_WORKFLOW_TASK_STARTED),
        event(E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED),
        event(E.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED),  # 1
        event(E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED),  # 1
        event(E.EVENT_TYPE_ACTIVITY_TASK_STARTED, activity_task_started_event_attributes=started),
        event(E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED),  # + 2 retries
        event(E.EVENT_TYPE_TIMER_STARTED),  # 1
        event(E.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED),
    ]
    assert billable_actions(history) == 6


def test_signal_with_start_is_one_action_and_a_later_signal_another() -> None:
    history = [
        event(E.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED),
        event(E.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED),  # the same action as the start
        event(E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED),
        event(E.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED),
    ]
    assert billable_actions(history) == 2


def test_patch_markers_are_free_and_local_activities_count_once_per_task() -> None:
    history = [
        upsert("TemporalChangeVersion"),  # what workflow.patched writes: exempt
        upsert("TemporalChangeVersion", "AguiRunIds"),  # 1
        local_activity(4),
        local_activity(4),  # the same workflow task: still 1
        local_activity(9),  # 1
        event(E.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED),  # 2
    ]
    assert billable_actions(history) == 5
