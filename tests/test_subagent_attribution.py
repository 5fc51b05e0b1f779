"""AG-UI's `subagentRunId` from a producer to the clients: an owner workflow offers on
behalf of a sub-agent's run (`offer_in_thread(subagent_run_id=...)`), and the id arrives
unchanged in the `RUN_FINISHED` interrupt outcome, in hydrate, at `@ag-ui/client`'s
`HttpAgent` and at TanStack's `ChatClient`; a bad id is refused at the producer and by the
thread's check of a raw offer."""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows._interrupt import (
    INVALID_OFFER,
    MAX_SUBAGENT_RUN_ID,
    interrupt_problem,
)
from tests.agui import STREAMS
from tests.node_clients import requires_node, run_node, streams_of
from tests.test_producers import owned, owner_queue, owner_worker, start_order, until

__all__ = ["owner_queue"]  # the fixture, used by name

SUBAGENT = "warehouse-run-7"
GOOD = {"id": "int-9", "reason": "input_required", "message": "Which?"}


@pytest.mark.parametrize("value", ["", "  ", None, 7, "x" * (MAX_SUBAGENT_RUN_ID + 1)])
def test_a_raw_offer_with_a_bad_subagent_run_id_is_refused(value: Any):
    problem = interrupt_problem({**GOOD, "subagentRunId": value})
    assert problem is not None and problem.error_type == INVALID_OFFER


def test_a_raw_offer_with_a_subagent_run_id_is_valid():
    assert interrupt_problem({**GOOD, "subagentRunId": "x" * MAX_SUBAGENT_RUN_ID}) is None


async def test_the_producer_refuses_an_empty_subagent_run_id(
    client: Client, settings: Settings, owner_queue: str, thread_id: str
):
    async with owner_worker(client, owner_queue):
        order = await start_order(client, settings, owner_queue, thread_id, subagent_run_id=" ")
        with pytest.raises(WorkflowFailureError) as failed:
            await order.result()
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == INVALID_OFFER
    assert "subagentRunId" in str(cause)


@requires_node
async def test_agui_client_and_tanstack_receive_the_subagent_run_id(
    gateway_url: str, client: Client, settings: Settings, owner_queue: str, thread_id: str
):
    url = f"{gateway_url}/agents/inbox"
    async with owner_worker(client, owner_queue):
        await start_order(client, settings, owner_queue, thread_id, subagent_run_id=SUBAGENT)
        # offered, or already delivered by a run of the thread's own
        await until(client, thread_id, lambda state: bool(owned(state)))
        agui = await run_node(
            "agui_agent.mjs", {"url": url, "threadId": thread_id, "steps": [{"raw": {}}]}
        )
        [asked] = agui["snapshots"]
        STREAMS.extend(streams_of(agui["snapshots"]))
        # a run that brings nothing: the thread delivers what waits (again)
        assert asked["error"] is None and asked["outcome"]["type"] == "interrupt", asked
        [interrupt] = asked["outcome"]["interrupts"]
        assert interrupt["subagentRunId"] == SUBAGENT  # the RUN_FINISHED outcome, as received
        [pending] = asked["pendingInterrupts"]
        assert pending["subagentRunId"] == SUBAGENT  # what HttpAgent keeps for the resume

        tanstack = await run_node(
            "tanstack_chat.mjs",
            {"url": url, "threadId": thread_id, "persistence": True, "steps": [{"attach": True}]},
        )
        [hydrated] = tanstack["snapshots"]
        STREAMS.extend(streams_of(tanstack["snapshots"]))
        [item] = hydrated["interrupts"]
        assert (item["kind"], item["canResolve"]) == ("generic", True), item
        assert item["wireSubagentRunId"] == SUBAGENT  # hydrate carried it to the client
        # TanStack's interrupt items (ai-client 0.33) have no field for it: they keep id,
        # reason, message, responseSchema, expiresAt and metadata only
        assert item["subagentRunId"] is None
