"""A run records one patch marker, its generation, instead of one per patch it takes.

Every `workflow.patched` marker is also a `TemporalChangeVersion` search-attribute upsert (a
visibility write) in the same workflow task; a new thread, and every continue-as-new, paid
for each patch it touched. A run begun under today's code records the generation's marker
in its first task and takes every patch of it without asking (`workflows/patches.py`);
histories from before replay as they did (`tests/workflows/test_replay.py`)."""

from __future__ import annotations

import json

import httpx
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from ag_ui_temporal.workflows.contract import thread_workflow_id
from ag_ui_temporal.workflows.patches import GENERATIONS
from tests.agui import finished, interrupts, resolve, run

EMAIL = "Send an email to ada@example.com saying hi"
NEWEST = GENERATIONS[0][0]  # what a run begun today records
PYDANTIC_AI_PATCH = "pydantic_ai:stable_default_run_id"  # the library's own, once per run


async def test_a_thread_records_one_marker_for_all_its_patches(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    asked = await run(http, thread_id, text=EMAIL)
    [interrupt] = interrupts(asked)
    declined = await run(
        http,
        thread_id,
        messages=asked[-2]["messages"],
        resume=[resolve(interrupt, {"approved": False})],
    )
    assert finished(declined)["outcome"] == {"type": "success"}
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    history = await handle.fetch_history()
    markers = [
        json.loads(e.marker_recorded_event_attributes.details["patch-data"].payloads[0].data)["id"]
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
    ]
    assert markers[0] == NEWEST  # first, before the run's update
    assert set(markers[1:]) <= {PYDANTIC_AI_PATCH}, markers  # none of ours
    described = await handle.describe()
    versions = described.raw_description.workflow_execution_info.search_attributes
    recorded = json.loads(versions.indexed_fields["TemporalChangeVersion"].data)
    assert NEWEST in recorded
    assert len(recorded) == len(markers)  # one visibility write per marker, no more
