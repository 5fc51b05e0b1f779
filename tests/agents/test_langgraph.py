"""LangGraph graphs in threads (docs/agents.md#langgraph-graphs), on one real worker and
gateway: the example graph of `make run` (`examples.agents.email_graph`) asks to approve its
`sendEmail` call for two days and sends once, with edits, through the worker's `sendEmail`
activity (the email is read from the store's outbox, the activity's runs from Temporal's
history), also driven by the real JS clients (TanStack's `ChatClient`, `@ag-ui/client`'s
`HttpAgent`) and across a worker process killed while it waits; a graph of the test's own
asks questions of its own (`interrupt()`), several in one batch, and hears an expiry."""

from __future__ import annotations

import importlib
import json
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from pydantic import SecretStr
from pydantic_ai.durable_exec.temporal import PydanticAIPlugin
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from ag_ui_temporal.agents.graphs import GraphsPlugin
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.temporal_client import DATA_CONVERTER
from ag_ui_temporal.worker import build_worker
from ag_ui_temporal.worker_plugin import SANDBOX
from ag_ui_temporal.workflows.contract import json_size, thread_workflow_id
from ag_ui_temporal.workflows.thread.agents._graph_checkpoint import carry, restored
from ag_ui_temporal.workflows.thread.workflow import ThreadWorkflow
from tests.agents.sdk_flows import http_agent_approves, tool_results
from tests.agents.worker_kill import approved_after_a_kill
from tests.agui import STREAMS, finished, interrupts, resolve, run, streamed_text, texts, types
from tests.conftest import histories, serve_gateway
from tests.effects import EffectLog
from tests.node_clients import requires_node, run_node
from tests.test_producers import until

EXAMPLE = "ag_ui_temporal.examples.agents.email_graph"
QUESTIONS = "tests.agents.langgraph_questions"
ASK = "Send an email to ada@example.com saying hi"
HEARD = "I heard: expired."
HISTORIES = sorted((Path(__file__).parent / "histories").glob("langgraph_*.json"))
"""Recorded LangGraph threads: `langgraph_email_edited_and_sent` is the thread of
`test_the_example_asks_to_approve_send_email_for_two_days` (asked, approved with edits, the
resume repeated), on this module's worker, fetched with `fetch_history()` and written with
`WorkflowHistory.to_json()`."""
HISTORY_LIMIT = 40
"""Threads continue as new after this many history events: a few runs each, so the graphs'
checkpoints cross continue-as-new in the tests below."""


@pytest.fixture(scope="module")
async def graphs(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[httpx.AsyncClient]:
    name = f"langgraph-{uuid.uuid4().hex}"
    settings = Settings(
        data_dir=data_dir / name,
        task_queue=name,
        agent_modules=[EXAMPLE, QUESTIONS],
        thread_history_limit=HISTORY_LIMIT,
        # no workflow stays cached: every workflow task replays the thread from its history, as
        # a restarted worker does, so each answer below reaches a graph rebuilt by a replay
        worker_max_cached_workflows=0,
    )
    async with (
        build_worker(client, settings, executor),
        serve_gateway(settings, client) as url,
        httpx.AsyncClient(base_url=url, timeout=60) as http,
    ):
        yield http


def replayer() -> Replayer:
    """A worker's replayer with the registered graphs (`make run`'s example among them)."""
    importlib.import_module(EXAMPLE)  # registers it, as a worker's `AGENT_MODULES` does
    return Replayer(
        workflows=[ThreadWorkflow],
        data_converter=DATA_CONVERTER,
        workflow_runner=SANDBOX,
        plugins=[PydanticAIPlugin(), GraphsPlugin()],
    )


def said(events: list[dict[str, Any]]) -> set[str]:
    """What the assistant's messages say in the run's closing `MESSAGES_SNAPSHOT`."""
    [snapshot] = [e for e in events if e["type"] == "MESSAGES_SNAPSHOT"]
    return {
        m["content"] for m in snapshot["messages"] if m["role"] == "assistant" and m.get("content")
    }


def emails(outbox: EffectLog, call_id: str) -> list[dict[str, Any]]:
    """The emails sent for the call: what the `sendEmail` activity recorded in the store's
    outbox under its id (the store every worker shares, whichever process sent it)."""
    return [e["args"] for e in outbox.effects("sendEmail") if e["key"] == call_id]


async def test_the_example_asks_to_approve_send_email_for_two_days(
    graphs: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
):
    listed = {agent["name"]: agent for agent in (await graphs.get("/agents")).json()}
    assert listed["langgraph"]["url"] == "/agents/langgraph"
    capabilities = (await graphs.get("/agents/langgraph/capabilities")).json()
    assert capabilities["humanInTheLoop"]["approveWithEdits"] is True

    events = await run(graphs, thread_id, agent="langgraph", text=ASK)
    [asked] = interrupts(events)
    assert asked["reason"] == "tool_call"
    assert asked["message"] == "Send an email to ada@example.com?"
    call_id = asked["toolCallId"]
    [start] = [e for e in events if e["type"] == "TOOL_CALL_START"]
    assert (start["toolCallId"], start["toolCallName"]) == (call_id, "sendEmail")
    expires = datetime.fromisoformat(asked["expiresAt"])
    assert (
        timedelta(days=2) - timedelta(minutes=5) < expires - datetime.now(UTC) <= timedelta(days=2)
    )
    binding = asked["metadata"]["tanstack:interruptBinding"]
    assert binding["kind"] == "tool-approval"
    assert binding["originalArgs"] == {"to": "ada@example.com", "subject": "Hi", "body": "hi"}
    assert emails(outbox, call_id) == []

    edits = {"to": "grace@example.com", "subject": "Hi", "body": "hello"}
    answer = [resolve(asked, {"approved": True, "editedArgs": edits})]
    done = await run(graphs, thread_id, agent="langgraph", resume=answer)
    assert finished(done)["outcome"] == {"type": "success"}
    [result] = [e for e in done if e["type"] == "TOOL_CALL_RESULT"]
    assert result["toolCallId"] == call_id
    assert json.loads(result["content"]) == {"sent": True, "to": edits["to"], "subject": "Hi"}
    assert "TOOL_CALL_START" not in types(done)
    assert streamed_text(done) == "Sent the email to grace@example.com."
    # the model's words came while it spoke (it takes 300 ms; batches go every 100 ms)
    assert len([e for e in done if e["type"] == "TEXT_MESSAGE_CONTENT"]) >= 2
    again = await run(graphs, thread_id, agent="langgraph", resume=answer)
    assert finished(again)["outcome"] == {"type": "success"}
    assert emails(outbox, call_id) == [edits]
    assert await node_runs(client, thread_id, SEND_ACTIVITY) == [1]  # sent once, not again

    # a worker that never saw the thread (one restarted) replays it to the same decisions
    history = await client.get_workflow_handle(thread_workflow_id(thread_id)).fetch_history()
    await replayer().replay_workflow(history)


async def test_a_question_takes_its_schema_and_its_answer_resumes_the_graph(
    graphs: httpx.AsyncClient, thread_id: str
):
    [asked] = interrupts(await run(graphs, thread_id, agent="questions", text="form"))
    assert (asked["reason"], asked["message"]) == ("input_required", "What is your name?")
    assert asked["responseSchema"]["required"] == ["name"]
    wrong = await run(graphs, thread_id, agent="questions", resume=[resolve(asked, {"name": ""})])
    assert wrong[-1]["code"] == "INVALID_PAYLOAD"
    done = await run(graphs, thread_id, agent="questions", resume=[resolve(asked, {"name": "Ada"})])
    assert texts(done) == "Hello Ada."


async def test_questions_of_one_super_step_are_one_batch(graphs: httpx.AsyncClient, thread_id: str):
    left, right = interrupts(await run(graphs, thread_id, agent="questions", text="two"))
    assert {left["message"], right["message"]} == {"Check left?", "Check right?"}
    partial = await run(graphs, thread_id, agent="questions", resume=[resolve(left, "yes")])
    assert partial[-1]["code"] == "PARTIAL_RESUME"
    answers = [resolve(left, f"{left['message']} yes"), resolve(right, f"{right['message']} no")]
    done = await run(graphs, thread_id, agent="questions", resume=answers)
    assert {"left: Check left? yes", "right: Check right? no"} <= said(done)


async def test_an_expiry_resumes_the_graph_which_hears_it(
    graphs: httpx.AsyncClient, client: Client, thread_id: str
):
    [asked] = interrupts(await run(graphs, thread_id, agent="questions", text="soon"))
    assert (asked["reason"], asked["responseSchema"]) == ("confirmation", {"type": "boolean"})
    await until(client, thread_id, lambda view: view.messages[-1].get("content") == HEARD)
    late = await run(graphs, thread_id, agent="questions", resume=[resolve(asked, True)])
    assert late[-1]["code"] == "INTERRUPT_EXPIRED"


async def test_an_expiry_may_end_the_graphs_turn_instead(
    graphs: httpx.AsyncClient, client: Client, thread_id: str
):
    interrupts(await run(graphs, thread_id, agent="questions-end", text="soon"))
    view = await until(client, thread_id, lambda view: view.messages[-1]["role"] == "assistant")
    assert view.messages[-1]["content"] == "I did not go on: nobody answered before it expired."
    done = await run(graphs, thread_id, agent="questions-end", text="hello")
    assert texts(done) == "You said 2 things."  # the graph starts anew from the message


async def test_the_graph_remembers_across_continue_as_new(
    graphs: httpx.AsyncClient, client: Client, thread_id: str
):
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    first_run = None
    for said_before in range(1, 20):
        done = await run(graphs, thread_id, agent="questions", text="hello")
        assert texts(done) == f"You said {said_before} things."
        first_run = first_run or (await handle.describe()).run_id
        if (await handle.describe()).run_id != first_run:
            break
    else:
        raise AssertionError("the thread never continued as new")
    done = await run(graphs, thread_id, agent="questions", text="again")
    assert texts(done) == f"You said {said_before + 1} things."


async def test_a_rejection_sends_nothing(
    graphs: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
):
    [asked] = interrupts(await run(graphs, thread_id, agent="langgraph", text=ASK))
    no = [resolve(asked, {"approved": False})]
    done = await run(graphs, thread_id, agent="langgraph", resume=no)
    [result] = [e for e in done if e["type"] == "TOOL_CALL_RESULT"]
    assert (result["toolCallId"], result["content"]) == (asked["toolCallId"], "you rejected it")
    assert texts(done) == "I did not send the email: you rejected it."
    assert emails(outbox, asked["toolCallId"]) == []
    assert await node_runs(client, thread_id, SEND_ACTIVITY) == []


async def test_a_note_the_approval_does_not_take_is_refused(
    graphs: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
):
    """`ask_tool_call`'s approval takes no rejection payload: a note (a long one here) is
    refused before anything changes, as a pydantic-ai tool without `reject_payload` refuses
    it; what a graph hears of a note it does take is bounded (`test_approval_answers.py`)."""
    [asked] = interrupts(await run(graphs, thread_id, agent="langgraph", text=ASK))
    long = {"approved": False, "payload": {"reason": "no " * 600}}
    refused = await run(graphs, thread_id, agent="langgraph", resume=[resolve(asked, long)])
    assert types(refused) == ["RUN_STARTED", "RUN_ERROR"]
    assert refused[-1]["code"] == "INVALID_PAYLOAD"
    no = [resolve(asked, {"approved": False})]  # still open: the plain rejection lands
    done = await run(graphs, thread_id, agent="langgraph", resume=no)
    assert texts(done) == "I did not send the email: you rejected it."
    assert emails(outbox, asked["toolCallId"]) == []


async def test_the_carried_checkpoint_keeps_within_its_budget():
    """Pure: a long conversation's checkpoint gives up its oldest messages, from a user message
    on, and what is kept restores as the graph's state."""
    graph: StateGraph[Any, Any, Any, Any] = StateGraph(MessagesState)
    graph.add_node("echo", lambda state: {"messages": [AIMessage(f"{len(state['messages'])}")]})
    graph.add_edge(START, "echo")
    saver = InMemorySaver()
    app = graph.compile(checkpointer=saver)
    config: Any = {"configurable": {"thread_id": "long"}}
    for n in range(30):
        await app.ainvoke({"messages": [HumanMessage(f"message {n} " + "x" * 1000)]}, config)
    budget = 20_000
    carried = carry(saver, "long", budget)
    assert json_size(carried) <= budget
    kept = (await graph.compile(checkpointer=restored(carried, "long")).aget_state(config)).values
    assert isinstance(kept["messages"][0], HumanMessage) and 2 < len(kept["messages"]) < 60
    assert kept["messages"][-1].text == "59"  # the newest messages, as they were


@pytest.mark.parametrize("path", HISTORIES, ids=[path.stem for path in HISTORIES])
async def test_a_recorded_langgraph_thread_replays(path: Path):
    """Threads parked on a graph meet new worker code: what they recorded must replay (record
    anew only for a new shape, never to make a failing replay pass)."""
    await replayer().replay_workflow(WorkflowHistory.from_json(path.stem, path.read_text()))


# --------------------------------------------------------------------------
# The real JS clients against the example, and a worker process killed while it waits.
# --------------------------------------------------------------------------

SEND_ACTIVITY = "sendEmail"
"""The worker's activity the example's `sendEmail` node (workflow code: it asks, then sends)
sends with."""
MODEL_NODE = "langgraph.model"
"""The example's model node, an activity (`temporalio-langgraph` names it `graph.node`)."""
EDITED = {"to": "grace@example.com", "subject": "Hi", "body": "hello from the client"}


async def node_runs(client: Client, thread_id: str, activity: str) -> list[int]:
    """The attempt that completed each run of `activity` in the thread, all its runs (it may
    have continued as new): what Temporal ran, whichever worker process ran it."""
    attempts: list[int] = []
    for history in await histories(client, thread_id):
        ours = {
            e.event_id
            for e in history.events
            if e.activity_task_scheduled_event_attributes.activity_type.name == activity
        }
        attempts += [
            e.activity_task_started_event_attributes.attempt
            for e in history.events
            if e.activity_task_started_event_attributes.scheduled_event_id in ours
        ]
    return attempts


@requires_node
async def test_tanstack_chat_client_approves_the_graphs_call_with_edits(
    graphs: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
):
    """TanStack's `ChatClient` with the published `sendEmail` definition registered: the
    graph's approval is a `tool-approval` item; `resolveInterrupt(true, {editedArgs})` sends
    the edited email, once."""
    job = {
        "url": f"{graphs.base_url}/agents/langgraph",
        "threadId": thread_id,
        "tools": ["published:sendEmail"],
        "steps": [
            {"send": ASK},
            {"decide": [{"index": 0, "approve": True, "editedArgs": EDITED}]},
        ],
    }
    asked, done = (await run_node("tool_approval_chat.mjs", job))["steps"]
    for step in (asked, done):
        STREAMS.extend(request["events"] for request in step["requests"] if request["events"])
        assert (step["stepError"], step["error"], step["interruptErrors"]) == (None, None, [])
    [item] = asked["interrupts"]
    assert (item["kind"], item["canResolve"], item["reason"]) == (
        "tool-approval",
        True,
        "tool_call",
    )
    assert (item["toolName"], item["toolCallId"]) == ("sendEmail", item["wireToolCallId"])
    assert item["originalArgs"] == {"to": "ada@example.com", "subject": "Hi", "body": "hi"}
    [request] = done["requests"]
    assert request["body"]["resume"] == [
        {
            "interruptId": item["id"],
            "status": "resolved",
            "payload": {"approved": True, "editedArgs": EDITED},
        }
    ]
    assert done["interrupts"] == []
    assert "TOOL_CALL_START" not in [e["type"] for e in done["events"]]
    assert emails(outbox, item["toolCallId"]) == [EDITED]
    [content] = tool_results(done["events"]).values()
    assert json.loads(content) == {"sent": True, "to": EDITED["to"], "subject": EDITED["subject"]}
    assert "Sent the email to grace@example.com." in "".join(
        e["delta"] for e in done["events"] if e["type"] == "TEXT_MESSAGE_CONTENT"
    )
    # sent once, in one attempt; the model ran once per turn (before the ask, after the send)
    assert await node_runs(client, thread_id, SEND_ACTIVITY) == [1]
    assert await node_runs(client, thread_id, MODEL_NODE) == [1, 1]


@requires_node
async def test_http_agent_gets_the_graphs_interrupt_and_resumes_it(
    graphs: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
):
    await http_agent_approves(graphs, client, outbox, thread_id, agent="langgraph")
    assert await node_runs(client, thread_id, SEND_ACTIVITY) == [1]  # in one attempt


async def test_a_worker_killed_while_the_graph_waits_resumes_it_in_a_new_process(
    client: Client, tmp_path: Path, own_store: SecretStr, thread_id: str
):
    """Two `ag-ui-temporal worker` processes serving the example (replicas, started side by
    side): the graph asks, its workflow tasks all on the one that took the thread's first
    (it keeps the thread in memory); that one is SIGKILLed; the other, which never ran a task
    of the thread, takes the resume, replays the thread (the graph's checkpoint comes back
    from its history) and the graph goes on from its interrupt: it does not ask again, the
    model is not called again before the send, and the email is sent once, by that process's
    `sendEmail` activity (the only effect in the stack's store)."""
    asked, done = await approved_after_a_kill(
        client, tmp_path, own_store, thread_id, agent="langgraph", module=EXAMPLE, ask=ASK
    )
    assert "TOOL_CALL_START" not in types(done)
    call_id = asked["toolCallId"]
    assert json.loads(tool_results(done)[call_id]) == {
        "sent": True,
        "to": "ada@example.com",
        "subject": "Hi",
    }
    assert texts(done) == "Sent the email to ada@example.com."
    ada = {"to": "ada@example.com", "subject": "Hi", "body": "hi"}
    stored = EffectLog(own_store.get_secret_value()).effects()
    assert stored == [{"key": call_id, "tool": "sendEmail", "args": ada}]
    assert await node_runs(client, thread_id, SEND_ACTIVITY) == [1]  # by the second process
    assert await node_runs(client, thread_id, MODEL_NODE) == [1, 1]  # before the ask, after
