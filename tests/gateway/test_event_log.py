"""The thread's event log stays bounded while its runs stay joinable (the recent ones from the
log, older ones from the store's archive) and the transcript whole."""

from __future__ import annotations

import httpx
from temporalio.client import Client

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.thread._log import RUNS_KEPT
from tests.agui import run
from tests.gateway.threads import start_short_thread


async def test_continue_as_new_trims_the_log(
    http: httpx.AsyncClient, client: Client, settings: Settings, thread_id: str
):
    handle = await start_short_thread(client, settings, thread_id, history_limit=40)
    runs = [
        (await run(http, thread_id, text=f"hello {n}"))[0]["runId"] for n in range(RUNS_KEPT + 5)
    ]

    description = await client.get_workflow_handle(handle.id).describe()
    assert description.run_id != handle.result_run_id  # it continued as new on the way

    def join(run_id: str):
        return http.get("/agents/assistant", params={"runId": run_id, "threadId": thread_id})

    trimmed = await join(runs[0])  # no longer in the thread's log: read from the archive
    assert trimmed.status_code == 200 and "RUN_FINISHED" in trimmed.text
    assert (await join("never-ran")).status_code == 404
    latest = await join(runs[-1])
    assert latest.status_code == 200 and "RUN_FINISHED" in latest.text
    assert (await join(runs[-RUNS_KEPT])).status_code == 200

    hydrated = (await http.get("/agents/assistant", params={"threadId": thread_id})).json()
    assert len(hydrated["messages"]) == 2 * len(runs)  # the whole transcript, every run
