"""Record thread histories for the replay test: `python -m tests.workflows.record_histories`.

Names after it record only those scenarios. Run it when a new workflow shape
should be protected, never to "fix" a failing replay test: a failing replay
means the change would break parked threads (use `patches.patched` instead).
Each scenario leaves its thread where the file name says, e.g. paused on an open interrupt.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
from temporalio import activity
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from ag_ui_temporal.demo.activities import ToolActivities
from ag_ui_temporal.examples.orders import OrderInput, OrderWorkflow, build_examples_worker
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.store import Outbox, open_engine
from ag_ui_temporal.store.migrate import upgrade
from ag_ui_temporal.temporal_client import DATA_CONVERTER
from ag_ui_temporal.worker import build_worker
from ag_ui_temporal.workflows.chains.definitions import ChainDefinition, ChainInput, ChainStep
from ag_ui_temporal.workflows.chains.workflow import ApprovalChain
from ag_ui_temporal.workflows.contract import (
    CANCEL_RUN_UPDATE,
    DROP_RUNS_SIGNAL,
    INTERRUPT_SETTLED_SIGNAL,
    RUN_UPDATE,
    SEARCH_ATTRIBUTES,
    THREAD_QUERY,
    DropRuns,
    InterruptSettled,
    ResumeItem,
    RunRequest,
    RunResult,
    ThreadView,
    thread_workflow_id,
)
from ag_ui_temporal.workflows.contract.chains import inbox_thread
from ag_ui_temporal.workflows.thread.tool_calls import ToolCallInput, ToolCallOutput
from tests.agui import (
    PICK_DATE,
    cancel,
    copilotkit_resume,
    frames,
    interrupts,
    resolve,
    run,
    run_body,
)
from tests.conftest import bundled_binary, serve_gateway

HISTORIES = Path(__file__).parent / "histories"
RECORD_QUEUE = "record-histories"
Scenario = Callable[[httpx.AsyncClient, WorkflowEnvironment, str], Awaitable[dict[str, str] | None]]
"""Runs on thread `history-<name>`; may return other workflows to record ({kind: workflow id})."""


async def email_paused(http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str) -> None:
    await run(http, thread, text="Send an email to ada@example.com saying hi")


async def email_declined_audited_in_task(
    http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str
) -> None:
    """Asked and declined under `audit-in-the-changing-task` (0.2.0): each change's records
    go with a local activity in its own workflow task."""
    [pending] = interrupts(
        await run(http, thread, text="Send an email to ada@example.com saying hi")
    )
    await run(http, thread, resume=[resolve(pending, {"approved": False})])


async def email_edited_and_sent(
    http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str
) -> None:
    [pending] = interrupts(
        await run(http, thread, text="Send an email to ada@example.com saying hi")
    )
    edited = {"to": "grace@example.com", "subject": "Hi", "body": "hello"}
    await run(http, thread, resume=[resolve(pending, {"approved": True, "editedArgs": edited})])
    await run(http, thread, resume=[resolve(pending, {"approved": True, "editedArgs": edited})])


async def parallel_mixed(http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str) -> None:
    text = "Send emails to ada@example.com, bob@example.com and cy@example.com"
    ada, bob, cy = interrupts(await run(http, thread, text=text))
    await run(http, thread, resume=[resolve(ada, {"approved": True})])  # refused: partial
    await run(
        http,
        thread,
        resume=[resolve(ada, {"approved": True}), cancel(bob), resolve(cy, {"approved": False})],
    )


async def form_expired_then_cancelled(
    http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str
) -> None:
    [form] = interrupts(await run(http, thread, text="File the quarterly report"))
    await env.sleep(timedelta(days=3))
    await run(http, thread, resume=[resolve(form, {"quarter": "Q1", "year": 2026, "revenue": 1})])
    await run(http, thread, resume=[cancel(form)])
    await run(http, thread, text="File the quarterly report")


async def form_expired_stops_blocking(
    http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str
) -> None:
    """An expired form is settled as expired (`expired-interrupts-stop-blocking`): new input is
    taken without a cancel; a late resolve is refused; a cancel still acknowledges it."""
    [form] = interrupts(await run(http, thread, text="File the quarterly report"))
    await env.sleep(timedelta(days=3))
    await run(http, thread, text="What can you do?")
    await run(http, thread, resume=[resolve(form, {"quarter": "Q1", "year": 2026, "revenue": 1})])
    await run(http, thread, resume=[cancel(form)])


async def external_offer_resolved(
    http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str
) -> dict[str, str]:
    """An order workflow (another task queue) pauses in an inbox thread; the client answers."""
    return await _order_answered(http, env, thread, "42", lambda view: bool(view.interrupts))


async def offer_delivered_on_arrival(
    http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str
) -> dict[str, str]:
    """The thread delivers an order's offer by a run of its own as it arrives; a run that
    brings nothing gets it again, bound to itself; the answer settles the order."""
    return await _order_answered(http, env, thread, "43", lambda view: bool(view.awaiting))


async def _order_answered(
    http: httpx.AsyncClient,
    env: WorkflowEnvironment,
    thread: str,
    order_id: str,
    offered: Callable[[ThreadView], bool],
) -> dict[str, str]:
    """An order asks in an inbox thread; once the thread shows it (`offered`), a run that
    brings nothing gets the question, the client answers it, the order ends."""
    order = await env.client.start_workflow(
        OrderWorkflow.run,
        OrderInput(order_id=order_id, thread_id=thread, thread_task_queue=RECORD_QUEUE),
        id=f"order-{thread}",
        task_queue=f"{RECORD_QUEUE}-owners",
    )
    handle = env.client.get_workflow_handle(thread_workflow_id(thread))
    while True:
        with contextlib.suppress(RPCError):
            if offered(await handle.query(THREAD_QUERY, result_type=ThreadView)):
                break
        await asyncio.sleep(0.05)
    [question] = interrupts(await run(http, thread, agent="inbox"))
    await run(http, thread, agent="inbox", resume=[resolve(question, {"speed": "express"})])
    await order.result()
    await run(http, thread, agent="inbox")
    return {"order": order.id}


async def inbox_batch_and_partial(
    http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str
) -> dict[str, str]:
    """An inbox shows every waiting item at once: two orders ask one after another, the
    second while the first awaits (the thread's own run delivers both again); a decision
    link answers the first alone (a partial resume, the gateway's `run` update), the chat
    the second, bound to the decision's run."""
    handle = env.client.get_workflow_handle(thread_workflow_id(thread))
    orders = []
    for n in range(2):
        asked = OrderInput(
            order_id=f"batch-{n}", thread_id=thread, thread_task_queue=RECORD_QUEUE,
            thread_owner="dana",
        )  # fmt: skip
        orders.append(
            await env.client.start_workflow(
                OrderWorkflow.run,
                asked,
                id=f"order-{n}-{thread}",
                task_queue=f"{RECORD_QUEUE}-owners",
            )
        )
        while True:  # until the thread shows every order so far
            with contextlib.suppress(RPCError):
                view = await handle.query(THREAD_QUERY, result_type=ThreadView)
                if len(view.awaiting) == n + 1:
                    break
            await asyncio.sleep(0.05)
    first, second = view.awaiting
    decision = RunRequest(
        thread_id=thread, run_id=f"decision-{thread}", agent="inbox", principal="dana",
        partial=True, via="link",
        resume=[ResumeItem(
            interrupt_id=first.id, status="resolved", payload={"speed": "express"},
            has_payload=True,
        )],
    )  # fmt: skip
    await handle.execute_update(RUN_UPDATE, decision, id=decision.run_id, result_type=RunResult)
    await run(
        http, thread, agent="inbox", principal="dana", parent_run_id=decision.run_id,
        resume=[resolve(second.interrupt, {"speed": "standard"})],
    )  # fmt: skip
    for order in orders:
        await order.result()
    return {"order": orders[0].id}


async def tool_approvals_mixed(
    http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str
) -> None:
    """After the TanStack tool-approval envelope: approve with edits, reject, cancel."""
    text = "Send emails to ada@example.com, bob@example.com and cy@example.com"
    ada, bob, cy = interrupts(await run(http, thread, text=text))
    edited = {"to": "grace@example.com", "subject": "Hi", "body": "hello"}
    await run(
        http,
        thread,
        resume=[
            resolve(ada, {"approved": True, "editedArgs": edited}),
            resolve(bob, {"approved": False}),
            cancel(cy),
        ],
    )


async def expense_submitted_and_rejected(
    http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str
) -> dict[str, str]:
    """alice submits an expense (tool approval, X-Principal); the chain's manager rejects it;
    the outcome is posted to her thread and streamed on her next run."""
    text = "Reimburse 2400 EUR for the Berlin offsite"
    [tool] = interrupts(await run(http, thread, text=text, principal="alice"))
    await run(http, thread, resume=[resolve(tool, {"approved": True})], principal="alice")
    inbox = inbox_thread("bob")
    handle = env.client.get_workflow_handle(thread_workflow_id(inbox))
    while True:  # until the chain's offer reached bob's inbox
        with contextlib.suppress(RPCError):
            if (await handle.query(THREAD_QUERY, result_type=ThreadView)).interrupts:
                break
        await asyncio.sleep(0.05)
    [step] = interrupts(await run(http, inbox, agent="inbox", principal="bob"))
    mine = env.client.get_workflow_handle(thread_workflow_id(thread))
    before = len((await mine.query(THREAD_QUERY, result_type=ThreadView)).messages)
    await run(
        http, inbox, agent="inbox", principal="bob", resume=[resolve(step, {"decision": "reject"})]
    )
    while True:  # until the outcome was posted (and delivered by a run of the thread's own)
        state = await mine.query(THREAD_QUERY, result_type=ThreadView)
        if len(state.messages) > before:
            break
        await asyncio.sleep(0.05)
    await run(http, thread, text="any news?", principal="alice")
    return {"chain": f"expense-{tool['toolCallId']}"}


async def chain_rules_delegated(
    http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str
) -> dict[str, str]:
    """A chain under the rules: a forged settlement is dropped, bob delegates to
    carol (a known delegate), carol approves (her inbox asks the chain first); the outcome
    is posted to alice's thread."""
    bob, carol = "rules-bob", "rules-carol"
    definition = ChainDefinition(
        name="rules", steps=[ChainStep(name="manager", approvers=[bob])], delegates=[carol]
    )
    chain = await env.client.start_workflow(
        ApprovalChain.run,
        ChainInput(
            chain_id=f"chain-{thread}", definition=definition, requester="alice",
            requester_thread=thread, thread_task_queue=RECORD_QUEUE, index=False,
        ),
        id=f"chain-{thread}",
        task_queue=RECORD_QUEUE,
    )  # fmt: skip
    [step] = interrupts(await _delivered(http, env, bob))
    forged = InterruptSettled(
        interrupt_id=step["id"], thread_id=inbox_thread(bob), status="resolved",
        payload={"decision": "approve"}, principal=bob,
    )  # fmt: skip
    await chain.signal(INTERRUPT_SETTLED_SIGNAL, forged)
    decision = {"decision": "delegate", "delegateTo": carol}
    await run(
        http, inbox_thread(bob), agent="inbox", principal=bob, resume=[resolve(step, decision)]
    )
    [delegated] = interrupts(await _delivered(http, env, carol))
    await run(
        http, inbox_thread(carol), agent="inbox", principal=carol,
        resume=[resolve(delegated, {"decision": "approve"})],
    )  # fmt: skip
    await chain.result()
    return {"chain": chain.id, "inbox": thread_workflow_id(inbox_thread(carol))}


async def transcript_archived(
    http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str
) -> None:
    """Messages past the window go to the archive (an activity); snapshots are markers."""
    for n in range(3):  # the third passes `THREAD_WINDOW_BYTES`
        await run(http, thread, text=f"{n} " + "x" * 99_000)


async def _delivered(http: httpx.AsyncClient, env: WorkflowEnvironment, principal: str) -> Any:
    """The inbox run that shows what a chain offered `principal`, once the inbox delivered it
    (a run of its own, as the offer arrived)."""
    handle = env.client.get_workflow_handle(thread_workflow_id(inbox_thread(principal)))
    while True:
        with contextlib.suppress(RPCError):
            if (await handle.query(THREAD_QUERY, result_type=ThreadView)).awaiting:
                break
        await asyncio.sleep(0.05)
    return await run(http, inbox_thread(principal), agent="inbox", principal=principal)


async def date_picked_by_the_client(
    http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str
) -> None:
    """A frontend tool: the client offers `pickDate`, runs the call, sends the result."""
    asked = await run(http, thread, text="Pick a date for the meeting", tools=[PICK_DATE])
    [call] = [e for e in asked if e["type"] == "TOOL_CALL_START"]
    result = {"id": "tool-1", "role": "tool", "toolCallId": call["toolCallId"]}
    result["content"] = '{"date": "2026-12-24"}'
    await run(http, thread, messages=[result], tools=[PICK_DATE])


async def client_tool_approved_then_picked(
    http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str
) -> None:
    """A frontend tool that needs approval (the client marks `pickDate` so): the call is a
    `tool_call` interrupt; approved with edits, it goes to the client, whose result the
    assistant answers (`client-tool-approvals`)."""
    tools = [{**PICK_DATE, "needsApproval": True}]
    [asked] = interrupts(await run(http, thread, text="Pick a date for the meeting", tools=tools))
    edits = {"approved": True, "editedArgs": {"question": "Which day in December?"}}
    await run(http, thread, resume=[resolve(asked, edits)], tools=tools)
    result = {"id": "tool-1", "role": "tool", "toolCallId": asked["toolCallId"]}
    result["content"] = '{"date": "2026-12-24"}'
    await run(http, thread, messages=[result], tools=tools)


REFUSED = "refused@example.com"
"""`sendEmail` to this address fails for good (`RecordingTools`)."""


class RecordingTools(ToolActivities):
    """The demo's tools, but `sendEmail` to `REFUSED` fails for good (non-retryable)."""

    @activity.defn(name="sendEmail")
    async def send_email(self, call: ToolCallInput) -> ToolCallOutput:
        if call.args["to"] == REFUSED:
            raise ApplicationError("mailbox full", type="MailboxFull", non_retryable=True)
        return await super().send_email(call)


async def tool_failed_for_good(
    http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str
) -> None:
    """Two approved emails, one whose tool fails for good: its error is the call's result, the
    other is sent, and the run goes on."""
    text = f"Send emails to ada@example.com and {REFUSED}"
    ada, refused = interrupts(await run(http, thread, text=text))
    await run(
        http,
        thread,
        resume=[resolve(ada, {"approved": True}), resolve(refused, {"approved": True})],
    )


async def subagent_order_cancelled(
    http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str
) -> None:
    """The assistant's sub-agent `orders` asks to cancel an order (`subagentRunId`); approved,
    its run resumes and the assistant answers."""
    [asked] = interrupts(await run(http, thread, text="Cancel order 42"))
    await run(http, thread, resume=[resolve(asked, {"approved": True})])


async def run_stopped(http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str) -> None:
    """A run stopped while the assistant streams its reply (`cancel_run`, issue 30): its
    model request is cancelled, the text so far stays, marked stopped; the next message is
    answered. Recorded with `--local` and `OFFLINE_MODEL_WORD_DELAY=0.1`: the stop must land
    while the reply is still being written (the scenario fails otherwise)."""
    body = run_body(thread, "hello")
    async with http.stream("POST", "/agents/assistant", json=body) as response:
        async for frame in frames(response):
            if frame.data is not None and frame.data["type"] == "TEXT_MESSAGE_CONTENT":
                break
        url = f"/agents/assistant/threads/{thread}/runs/{body['runId']}/cancel"
        stopped = await http.post(url)
        assert stopped.status_code == 200, f"the run ended before the stop: {stopped.text}"
    await run(http, thread, text="hello again")


async def run_dropped(http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str) -> None:
    """The gateway's stuck-thread watch drops a run (`agui_drop_runs`, patch
    `dropped-runs-refused`), as it does just before it resets the thread: the run, sent
    after that, is refused (nothing recorded); the next message is taken."""
    await run(http, thread, text="hi")
    handle = env.client.get_workflow_handle(thread_workflow_id(thread))
    await handle.signal(DROP_RUNS_SIGNAL, DropRuns(run_ids=["run-dropped"]))
    refused = await run(http, thread, text="hi again", run_id="run-dropped")
    assert refused[-1]["code"] == "RUN_FAILED", refused
    await run(http, thread, text="hi once more")


async def continuation_resumed(
    http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str
) -> dict[str, str]:
    """CopilotKit's resume (issue 39): under the run id of the run that asked, with a tool
    message per call (`resume-under-the-asking-run-id`). An order's question that arrived
    meanwhile is delivered by that continuation, bound to the same id, and answered by a
    continuation again; the same continuation sent again, and a reused id, change nothing."""
    asked = await run(http, thread, text="Send emails to ada@example.com and bob@example.com")
    ada, bob = interrupts(asked)
    order = await env.client.start_workflow(
        OrderWorkflow.run,
        OrderInput(order_id="44", thread_id=thread, thread_task_queue=RECORD_QUEUE),
        id=f"order-{thread}",
        task_queue=f"{RECORD_QUEUE}-owners",
    )
    handle = env.client.get_workflow_handle(thread_workflow_id(thread))
    while not (await handle.query(THREAD_QUERY, result_type=ThreadView)).interrupts[2:]:
        await asyncio.sleep(0.05)  # until the order's offer waits
    answers = copilotkit_resume(asked, [resolve(ada, {"approved": True}), cancel(bob)])
    done = await run(http, thread, **answers)
    await run(http, thread, **answers)  # the same POST again: Temporal's stored answer
    [question] = interrupts(done)
    await run(http, thread, **copilotkit_resume(done, [resolve(question, {"speed": "express"})]))
    await order.result()
    await run(http, thread, run_id=asked[0]["runId"], text="hello")  # refused: RUN_ID_REUSED
    await run(http, thread, text="What can you do?")
    return {"order": order.id}


async def waiting_run_stopped(
    http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str
) -> None:
    """A second run sent while the first streams waits for the run lock; a stop naming it
    is taken there (`stop-runs-waiting-their-turn`, issue 38): the first ends as it would
    have, the second begins stopped. Recorded with `--local` and
    `OFFLINE_MODEL_WORD_DELAY=0.1`: the first must still be writing when both arrive."""
    first, second = run_body(thread, "hello"), run_body(thread, "and then?")
    async with http.stream("POST", "/agents/assistant", json=first) as response:
        stream = frames(response)
        async for frame in stream:
            if frame.data is not None and frame.data["type"] == "TEXT_MESSAGE_CONTENT":
                break
        waiting = asyncio.create_task(http.post("/agents/assistant", json=second))
        await _accepted(env.client, thread, RUN_UPDATE, 2)
        url = f"/agents/assistant/threads/{thread}/runs/{second['runId']}/cancel"
        stopping = asyncio.create_task(http.post(url))
        await _accepted(env.client, thread, CANCEL_RUN_UPDATE, 1)
        async for frame in stream:
            assert frame.data is None or frame.data["type"] != "RUN_ERROR", "the first stopped"
    stopped = await stopping
    assert stopped.status_code == 200, f"the second run was not stopped: {stopped.text}"
    assert '"code":"RUN_CANCELLED"' in (await waiting).text
    await run(http, thread, text="hello again")


async def _accepted(client: Client, thread: str, update: str, count: int) -> None:
    """Until the thread's history holds `count` accepted updates named `update`."""
    handle = client.get_workflow_handle(thread_workflow_id(thread))
    accepted = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
    while True:
        names = [
            event.workflow_execution_update_accepted_event_attributes.accepted_request.input.name
            async for event in handle.fetch_history_events()
            if event.event_type == accepted
        ]
        if names.count(update) >= count:
            return
        await asyncio.sleep(0.05)


SCENARIOS: dict[str, Scenario] = {
    "email_paused": email_paused,
    "email_edited_and_sent": email_edited_and_sent,
    "parallel_mixed": parallel_mixed,
    "tool_approvals_mixed": tool_approvals_mixed,
    "tool_failed_for_good": tool_failed_for_good,
    "form_expired_then_cancelled": form_expired_then_cancelled,
    "form_expired_stops_blocking": form_expired_stops_blocking,
    "date_picked_by_the_client": date_picked_by_the_client,
    "client_tool_approved_then_picked": client_tool_approved_then_picked,
    "subagent_order_cancelled": subagent_order_cancelled,
    "transcript_archived": transcript_archived,
    "run_dropped": run_dropped,
    "external_offer_resolved": external_offer_resolved,
    "expense_submitted_and_rejected": expense_submitted_and_rejected,
    "chain_rules_delegated": chain_rules_delegated,
    # on a dev server (`--local`): the time-skipping test server keeps only the last update
    # of a thread a producer started
    "offer_delivered_on_arrival": offer_delivered_on_arrival,
    "inbox_batch_and_partial": inbox_batch_and_partial,
    "continuation_resumed": continuation_resumed,
    # `--local` with `OFFLINE_MODEL_WORD_DELAY=0.1`: a stop must land while a reply streams
    "run_stopped": run_stopped,
    "waiting_run_stopped": waiting_run_stopped,
    # 0.2.0, `--local`: the audit records sent in the task that made the change
    "email_declined_audited_in_task": email_declined_audited_in_task,
}
"""The histories every later commit must replay: the 0.1.0 ones (the baseline), then each
release's new paths (the comment above its names). Record only new names (`python -m
tests.workflows.record_histories <name>`): a new path behind a patch (`workflows/patches.py`)
gets a scenario of its own."""


async def record(
    client: Client, env: WorkflowEnvironment, http: httpx.AsyncClient, names: list[str]
) -> None:
    HISTORIES.mkdir(exist_ok=True)
    for name, scenario in SCENARIOS.items():
        if names and name not in names:
            continue
        owners = await scenario(http, env, f"history-{name}") or {}
        recorded = {name: thread_workflow_id(f"history-{name}")}
        recorded |= {f"{name}.{kind}": workflow_id for kind, workflow_id in owners.items()}
        for file, workflow_id in recorded.items():
            history = await client.get_workflow_handle(workflow_id).fetch_history()
            (HISTORIES / f"{file}.json").write_text(history.to_json())
            print("recorded", file)


async def main(names: list[str]) -> None:
    """Record the named scenarios (all of them without names). With `--local` first, on a
    dev server: the time-skipping test server keeps only the last update of a thread a
    producer started (`offer_delivered_on_arrival` was recorded so)."""
    local = names[:1] == ["--local"]
    if local:
        names = names[1:]
        env = await WorkflowEnvironment.start_local(
            dev_server_existing_path=bundled_binary("temporal"),
            data_converter=DATA_CONVERTER,
            search_attributes=list(SEARCH_ATTRIBUTES),
            dev_server_extra_args=["--log-level", "error"],
        )
    else:
        env = await WorkflowEnvironment.start_time_skipping(
            test_server_existing_path=bundled_binary("temporal-test-server"),
            data_converter=DATA_CONVERTER,
        )
    # a local activity (audit_in_task) only on a dev server: the time-skipping one cannot
    settings = Settings(
        data_dir=Path(tempfile.mkdtemp()),
        task_queue=RECORD_QUEUE,
        index_runs=False,
        audit_in_task=local,
    )
    await upgrade(settings.store_url)  # the archive's tables (`transcript_archived` writes them)
    tools = RecordingTools(Outbox(open_engine(settings.store_url)))
    with ThreadPoolExecutor() as executor:
        async with (
            env,
            build_worker(env.client, settings, executor, tools.activities()),
            build_examples_worker(env.client, task_queue=f"{RECORD_QUEUE}-owners"),
            serve_gateway(settings, env.client) as url,
            httpx.AsyncClient(base_url=url, timeout=30) as http,
        ):
            await record(env.client, env, http, names)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
