"""Google ADK agents in threads (docs/agents.md#google-adk-agents), on one real worker and
gateway through Temporal's own integration (`temporalio-google-adk`): the example of `make
run` (`examples.agents.adk_email`) asks to approve its `sendEmail` call for two days and sends
once through the worker's `sendEmail` activity; a rejection's note is what the model reads;
three calls are one batch; an expiry resumes the run with the calls rejected; a request for
input is an `input_required` interrupt with the agent's schema, and so is a long-running
tool's call, answered with its result; the conversation crosses
continue-as-new; a recorded history replays on a worker that never saw it; the real JS
clients drive it."""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from ag_ui_temporal.agents.adk_agents import MODEL_ACTIVITY
from ag_ui_temporal.examples.agents.email_script import HELP
from ag_ui_temporal.workflows.contract import STOPPED_METADATA_KEY, json_size, thread_workflow_id
from tests.agents.sdk_flows import (
    ADA,
    ASK,
    a_killed_worker_resumes_the_agent,
    a_model_failing_for_good_ends_the_run_not_the_thread,
    a_paused_run_crosses_continue_as_new,
    activity_runs,
    an_expiry_rejects_the_calls_between_runs,
    copilotkit_approves,
    emails,
    http_agent_approves,
    replayer_of,
    served_agents,
    stopped_once,
    tanstack_approves,
    the_conversation_crosses_continue_as_new,
    the_example_asks_to_approve_send_email_for_two_days,
    three_calls_are_one_batch,
    tool_results,
)
from tests.agui import (
    cancel,
    finished,
    interrupts,
    resolve,
    run,
    run_body,
    streamed_text,
    texts,
    types,
)
from tests.copilotkit.driver import requires_copilotkit
from tests.effects import EffectLog
from tests.gateway.test_streaming import is_type
from tests.llm.openai_replay import (
    GEMINI_TEXT,
    GEMINI_TEXT_REPLY,
    GEMINI_TOOL_CALL,
    GEMINI_TOOL_NAME,
    OpenAIReplay,
    openai_replay_server,  # noqa: F401 (a fixture)
)
from tests.node_clients import requires_node
from tests.test_producers import until

EXAMPLE = "ag_ui_temporal.examples.agents.adk_email"
OWN = "tests.agents.adk_agents"
HISTORIES = sorted((Path(__file__).parent / "histories").glob("adk_*.json"))
"""Recorded threads of ADK agents: `adk_email_approved_and_sent` (`RECORDED`) is the thread of
`test_the_example_asks_to_approve_send_email_for_two_days` (asked, approved, the resume
repeated), `LONG_RUNNING` a long-running tool's call answered; each written by its test under
`RECORD_HISTORIES=1`."""
RECORDED = "adk_email_approved_and_sent"
LONG_RUNNING = "adk_long_running_answered"
"""The thread of `test_a_long_running_tools_call_waits_for_a_person_who_gives_its_result`."""


@pytest.fixture(scope="module")
async def served(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[httpx.AsyncClient]:
    async with served_agents(client, data_dir, executor, [EXAMPLE, OWN]) as http:
        yield http


def replayer() -> Replayer:
    """A thread worker's replayer, with the agents the tests serve."""
    return replayer_of([EXAMPLE, OWN])


async def test_the_example_asks_to_approve_send_email_for_two_days(
    served: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
):
    history = await the_example_asks_to_approve_send_email_for_two_days(
        served, client, outbox, thread_id, agent="adk", replayer=replayer()
    )
    if os.environ.get("RECORD_HISTORIES"):
        (Path(__file__).parent / "histories" / f"{RECORDED}.json").write_text(history.to_json())


async def test_a_rejections_note_is_what_the_model_reads(
    served: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
):
    [asked] = interrupts(await run(served, thread_id, agent="adk-note", text=ASK))
    assert "payload" in json.dumps(asked["responseSchema"]["oneOf"][1])
    no = {"approved": False, "payload": {"reason": "not   to Ada,\nplease"}}
    done = await run(served, thread_id, agent="adk-note", resume=[resolve(asked, no)])
    [result] = [e for e in done if e["type"] == "TOOL_CALL_RESULT"]
    assert result["toolCallId"] == asked["toolCallId"]
    said = "I did not send the email: you rejected it: not to Ada, please."
    assert texts(done) == said
    assert emails(outbox, asked["toolCallId"]) == []
    assert await activity_runs(client, thread_id, "sendEmail") == 0


async def test_three_calls_are_one_batch(
    served: httpx.AsyncClient, outbox: EffectLog, thread_id: str
):
    await three_calls_are_one_batch(served, outbox, thread_id, agent="adk-three")


async def test_an_expiry_rejects_the_calls_between_runs(
    served: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
):
    await an_expiry_rejects_the_calls_between_runs(
        served, client, outbox, thread_id, agent="adk-soon"
    )


async def test_a_request_for_input_is_an_input_required_interrupt(
    served: httpx.AsyncClient, thread_id: str
):
    """ADK's `request_input` tool: an `input_required` interrupt bound to its call, with the
    schema the agent gave and the registration's expiry; an answer outside the schema is
    refused and changes nothing; one inside it is what the agent reads."""
    events = await run(served, thread_id, agent="adk-ask", text="hello")
    [asked] = interrupts(events)
    assert (asked["reason"], asked["message"]) == ("input_required", "What is your name?")
    assert asked["responseSchema"] == {"type": "string", "minLength": 1}
    [start] = [e for e in events if e["type"] == "TOOL_CALL_START"]
    assert (start["toolCallName"], start["toolCallId"]) == (
        "adk_request_input",
        asked["toolCallId"],
    )
    expires = datetime.fromisoformat(asked["expiresAt"]) - datetime.now(UTC)
    assert timedelta(minutes=55) < expires <= timedelta(hours=1)
    refused = await run(served, thread_id, agent="adk-ask", resume=[resolve(asked, "")])
    assert refused[-1]["code"] == "INVALID_PAYLOAD"
    done = await run(served, thread_id, agent="adk-ask", resume=[resolve(asked, "Ada")])
    assert finished(done)["outcome"] == {"type": "success"}
    assert texts(done) == "Hello, Ada."


async def test_a_long_running_tools_call_waits_for_a_person_who_gives_its_result(
    served: httpx.AsyncClient, client: Client, thread_id: str
):
    """A `LongRunningFunctionTool` whose function gives no result yet pauses ADK: the call is
    an `input_required` interrupt bound to it, whose free-text answer is the call's result,
    which the model reads and the transcript shows."""
    events = await run(served, thread_id, agent="adk-long", text="reimburse")
    [asked] = interrupts(events)
    assert (asked["reason"], asked["message"]) == ("input_required", "Reimburse 5 EUR?")
    assert asked["responseSchema"] == {"type": "string"}  # what the manager says
    [start] = [e for e in events if e["type"] == "TOOL_CALL_START"]
    assert (start["toolCallName"], start["toolCallId"]) == ("ask_manager", asked["toolCallId"])
    assert tool_results(events) == {}  # nothing ran yet
    done = await run(served, thread_id, agent="adk-long", resume=[resolve(asked, "approved")])
    assert finished(done)["outcome"] == {"type": "success"}
    assert texts(done) == 'The manager said: {"result": "approved"}.'
    assert tool_results(done) == {asked["toolCallId"]: '{"result": "approved"}'}
    # a worker that never saw the thread replays it to the same decisions
    history = await client.get_workflow_handle(thread_workflow_id(thread_id)).fetch_history()
    await replayer().replay_workflow(history)
    if os.environ.get("RECORD_HISTORIES"):
        (Path(__file__).parent / "histories" / f"{LONG_RUNNING}.json").write_text(history.to_json())


async def test_a_long_running_tools_call_nobody_answers_expires_and_the_model_hears_it(
    served: httpx.AsyncClient, client: Client, thread_id: str
):
    [asked] = interrupts(await run(served, thread_id, agent="adk-long-soon", text="reimburse"))
    said = 'The manager said: {"error": "nobody answered before it expired"}.'
    await until(client, thread_id, lambda view: view.messages[-1].get("content") == said)
    late = await run(served, thread_id, agent="adk-long-soon", resume=[resolve(asked, "yes")])
    assert late[-1]["code"] == "INTERRUPT_EXPIRED"


async def test_the_conversation_crosses_continue_as_new(
    served: httpx.AsyncClient, client: Client, thread_id: str
):
    await the_conversation_crosses_continue_as_new(served, client, thread_id, agent="adk-count")


async def test_a_paused_run_crosses_continue_as_new(
    served: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
):
    await a_paused_run_crosses_continue_as_new(served, client, outbox, thread_id, agent="adk")


async def test_a_cancelled_question_leaves_the_call_unsent_and_the_thread_goes_on(
    served: httpx.AsyncClient, outbox: EffectLog, thread_id: str
):
    """The user cancels the question instead of answering: the call does not run, the model
    reads why, and the next message starts anew."""
    [asked] = interrupts(await run(served, thread_id, agent="adk", text=ASK))
    done = await run(served, thread_id, agent="adk", resume=[cancel(asked)])
    assert finished(done)["outcome"] == {"type": "success"}
    assert texts(done) == "I did not send the email: it was cancelled."
    assert emails(outbox, asked["toolCallId"]) == []
    assert texts(await run(served, thread_id, agent="adk", text="hello")) == HELP


async def test_a_model_that_fails_for_good_ends_the_run_not_the_thread(
    served: httpx.AsyncClient, client: Client, thread_id: str
):
    await a_model_failing_for_good_ends_the_run_not_the_thread(
        served, client, thread_id, agent="adk-broken"
    )


async def test_a_stop_ends_the_resumed_run_and_the_thread_goes_on(
    served: httpx.AsyncClient, outbox: EffectLog, thread_id: str
):
    """Stopped while the model streams its answer after the approved call: the run ends
    `RUN_CANCELLED`, its text as far as it was shown, marked; the email was sent (its result
    is there); the thread takes the next message."""
    [asked] = interrupts(await run(served, thread_id, agent="adk-slow", text=ASK))
    body = run_body(thread_id, resume=[resolve(asked, {"approved": True})])
    stopped, events = await stopped_once(served, "adk-slow", body, is_type("TEXT_MESSAGE_CONTENT"))
    assert stopped.status_code == 200, stopped.text
    assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "RUN_CANCELLED"
    assert events[-2]["type"] == "TEXT_MESSAGE_END"
    assert events[-2]["metadata"] == {STOPPED_METADATA_KEY: True}
    whole = "Sent the email to ada@example.com."
    shown = texts(events)
    assert shown and whole.startswith(shown) and shown != whole
    assert list(tool_results(events)) == [asked["toolCallId"]]
    assert emails(outbox, asked["toolCallId"]) == [ADA]
    reply = await run(served, thread_id, agent="adk-slow", text="hello")
    assert types(reply)[-1] == "RUN_FINISHED"


async def test_a_run_too_large_to_pause_says_so_and_sends_nothing(
    served: httpx.AsyncClient, outbox: EffectLog, thread_id: str
):
    """A run whose session would be over its budget does not pause: its other tool ran, the
    call it would ask about does not run and gets why as its result, the run ends as it
    happened (no `RUN_FAILED`), and the conversation goes on."""
    from ag_ui_temporal.workflows.thread.agents.base import TOO_LARGE_TO_PAUSE

    events = await run(served, thread_id, agent="adk-bulk", text="go")
    assert finished(events)["outcome"] == {"type": "success"}
    starts = {e["toolCallName"]: e["toolCallId"] for e in events if e["type"] == "TOOL_CALL_START"}
    results = tool_results(events)
    assert json.loads(results[starts["bulky"]]) == {"result": "x" * 300_000}
    assert results[starts["sendEmail"]] == TOO_LARGE_TO_PAUSE
    assert f"I did not carry out the call to sendEmail: {TOO_LARGE_TO_PAUSE}." in texts(events)
    assert emails(outbox, starts["sendEmail"]) == []
    later = await run(served, thread_id, agent="adk-bulk", text="thanks")
    assert texts(later) == "You're welcome."


async def test_a_stop_cancels_the_tool_in_flight_and_the_thread_goes_on(
    served: httpx.AsyncClient, thread_id: str
):
    """Stopped while a tool's activity runs: the activity is cancelled, the run ends
    `RUN_CANCELLED`, the call gets a result saying so, and the thread takes the next message
    (ADK's run ends with the stop rather than wait on a cancelled activity for good)."""
    body = run_body(thread_id, "wait")
    stopped, events = await stopped_once(served, "adk-waits", body, is_type("TOOL_CALL_END"))
    assert stopped.status_code == 200, stopped.text
    assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "RUN_CANCELLED"
    [call] = [e["toolCallId"] for e in events if e["type"] == "TOOL_CALL_START"]
    assert "stopped" in tool_results(events)[call]
    assert texts(await run(served, thread_id, agent="adk-waits", text="hello")) == "Hello."


async def test_a_recorded_gemini_stream_comes_through_adks_own_model(
    served: httpx.AsyncClient,
    openai_replay_server: OpenAIReplay,  # noqa: F811 (the fixture imported above)
    thread_id: str,
):
    """ADK's `Gemini` model (google-genai's client) against recorded Gemini streams on
    loopback: its call is asked about, bound to the id ADK gives it; approved, the tool's
    result goes back to Gemini, whose answer streams into the thread as it comes."""
    from tests.agents.adk_agents import LoopbackGemini

    LoopbackGemini.base_url_of_replay = openai_replay_server.base_url.removesuffix("/v1")
    openai_replay_server.event_gap = 0.3  # three events, each past a batch (100 ms) apart
    ask = "What is the capital of the user country? Call the tool"
    [asked] = interrupts(await run(served, thread_id, agent="adk-gemini", text=ask))
    call = {"name": GEMINI_TOOL_NAME, "arguments": {}}
    assert asked["metadata"]["ag-ui-temporal:toolCall"] == call
    yes = [resolve(asked, {"approved": True})]
    done = await run(served, thread_id, agent="adk-gemini", resume=yes)
    assert json.loads(tool_results(done)[asked["toolCallId"]]) == {"result": "Mexico"}
    assert streamed_text(done) == GEMINI_TEXT_REPLY
    assert len([e for e in done if e["type"] == "TEXT_MESSAGE_CONTENT"]) >= 2
    first, second = openai_replay_server.requests
    assert (first.replayed, second.replayed) == (GEMINI_TOOL_CALL, GEMINI_TEXT)
    assert "/models/loopback-gemini-3-pro-preview:streamGenerateContent" in first.path
    [answered] = [p for p in second.body["contents"][-1]["parts"] if "functionResponse" in p]
    response = answered["functionResponse"]
    assert (response["name"], response["response"]) == (GEMINI_TOOL_NAME, {"result": "Mexico"})


@pytest.mark.parametrize("path", HISTORIES, ids=[path.stem for path in HISTORIES])
async def test_a_recorded_thread_replays(path: Path):
    """Threads parked on an ADK agent meet new worker code: what they recorded must replay
    (record anew only for a new shape, never to make a failing replay pass)."""
    await replayer().replay_workflow(WorkflowHistory.from_json(path.stem, path.read_text()))


def test_the_session_keeps_within_its_budget():
    """Pure: a long session gives up its oldest invocations so that it keeps within its
    budget; an invocation over it alone does not fit (nor does it pause)."""
    from google.adk.events import Event
    from google.adk.sessions import Session
    from google.genai import types as genai

    from ag_ui_temporal.workflows.thread.agents import _adk_session as adk_session

    def said(invocation: str, size: int) -> Event:
        content = genai.Content(role="user", parts=[genai.Part(text="x" * size)])
        return Event(invocation_id=invocation, author="user", content=content)

    session = Session(id="t", app_name="a", user_id="u")
    session.events = [said(f"i{n}", 30_000) for n in range(20)]
    data: dict[str, Any] = {}
    assert adk_session.kept(data, session)
    kept = data[adk_session.SESSION]
    assert json_size(kept) <= adk_session.SESSION_BYTES
    assert kept["events"][-1]["invocation_id"] == "i19" and len(kept["events"]) < 20
    huge = Session(id="t", app_name="a", user_id="u", events=[said("i0", 300_000)])
    assert not adk_session.kept(data, huge) and data[adk_session.SESSION] == kept  # kept nothing


def test_a_model_given_as_an_object_is_refused_at_registration():
    from google.adk.agents import LlmAgent
    from google.adk.models import Gemini

    from ag_ui_temporal.agents.adk_agents import register_adk_agent

    with pytest.raises(ValueError, match="give 'x' its model by name"):
        register_adk_agent(LlmAgent(name="x", model=Gemini(model="gemini-2.5-flash")))


def test_the_example_is_registered_by_its_module():
    importlib.import_module(EXAMPLE)
    from ag_ui_temporal.agents.registry import registered_adk_agent

    entry = registered_adk_agent("adk")
    assert entry is not None and entry.options.approval_expires_in == timedelta(days=2)


# --------------------------------------------------------------------------
# The real JS clients against the example, and a worker process killed while it waits.
# --------------------------------------------------------------------------


@requires_node
async def test_tanstack_chat_client_approves_the_agents_call(
    served: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str, tmp_path: Path
):
    await tanstack_approves(served, client, outbox, thread_id, tmp_path, agent="adk")


@requires_node
async def test_http_agent_gets_the_agents_interrupt_and_resumes_it(
    served: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
):
    await http_agent_approves(served, client, outbox, thread_id, agent="adk")


@requires_copilotkit
async def test_copilotkits_use_interrupt_approves_the_agents_call(
    served: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
):
    await copilotkit_approves(served, client, outbox, thread_id, agent="adk")


async def test_a_worker_killed_while_the_agent_waits_resumes_it_in_a_new_process(
    client: Client, tmp_path: Path, own_store: SecretStr, thread_id: str
):
    """ADK's session is rebuilt from the thread's history by the process that never saw it."""
    await a_killed_worker_resumes_the_agent(
        client, tmp_path, own_store, thread_id, agent="adk", module=EXAMPLE,
        model_activity=MODEL_ACTIVITY,
    )  # fmt: skip


def test_an_output_schema_goes_to_the_model_activity_as_json_schema():
    """Pure: ADK puts an agent's `output_schema` in the request as a pydantic class, which no
    activity input can carry; the model activity is sent its JSON Schema."""
    from google.adk.models.llm_request import LlmRequest
    from google.genai import types as genai
    from pydantic import BaseModel

    from ag_ui_temporal.agents.adk_agents import _sendable

    class Answer(BaseModel):
        city: str

    request = LlmRequest(model="m", config=genai.GenerateContentConfig(response_schema=Answer))
    sent = _sendable(request)
    assert sent.config.response_schema == Answer.model_json_schema()
    assert request.config.response_schema is Answer  # the workflow's own request is left alone
    plain = LlmRequest(model="m")
    assert _sendable(plain) is plain
