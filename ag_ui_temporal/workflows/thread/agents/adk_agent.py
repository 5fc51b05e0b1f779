"""A registered Google ADK agent, run in a thread (the workflow side).

Each thread run that gives the agent something to do is one `Runner.run_async`, in workflow
code, under Temporal's integration (`temporalio-google-adk`, installed by the worker's plugin):
each model call is an activity (`agents.adk_agents.adk_model`), whose text streams into the
thread. A runner plugin writes what happens as it happens (`RunWriter`, as for a pydantic-ai
agent): each model response; each tool's result comes from the run's events.

The conversation lives in the thread's state between runs as ADK's own `Session` (`SESSION`,
its JSON), within a budget. A run that pauses (ADK's `adk_request_confirmation` and
`adk_request_input` calls, read with the integration's `pending_hitl_requests`) asks about
each request: a confirmation is a `tool_call` interrupt bound to the gated call's id, a
request for input an `input_required` interrupt with the agent's schema; so is the call of a
long-running tool that gave no result yet, whose answer is the call's result
(`_adk_questions` reads them and makes the answers). Once all of them are settled (one resume
answers the batch), the answers go back in one message of the integration's
`hitl_confirmation_response` / `hitl_input_response` parts and the calls' function responses,
and ADK goes on from the session. A rejection's note (or why nobody
answered) is the error the model reads for the call (`_Writing.before_tool_callback`). ADK
runs an approved call with the model's arguments, so no approval takes `editedArgs`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Final

from temporalio import workflow
from temporalio.exceptions import FailureError

with workflow.unsafe.imports_passed_through():
    from google.adk.agents.run_config import RunConfig
    from google.adk.apps import App
    from google.adk.events import Event
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.plugins.base_plugin import BasePlugin
    from google.adk.runners import Runner
    from google.genai import types
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from temporalio.google_adk import (
        HitlRequest,
        pending_hitl_requests,
    )

    from ag_ui_temporal.agents.adk_agents import raise_if_cancelled
    from ag_ui_temporal.agents.registry import RegisteredAdkAgent, registered_adk_agent
    from ag_ui_temporal.workflows.contract import (
        AgentNotServed,
        InterruptStatus,
    )
    from ag_ui_temporal.workflows.contract.tools import filled
    from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord

from ag_ui_temporal.workflows.thread.agents._adk_questions import (
    ADK_CALLS,
    INPUT,
    KEY,
    NO_SCHEMA,
    NOTE,
    TOOL,
    Question,
    Waiting,
    answer,
    input_schema,
    long_running,
    question_id,
    unanswered,
)
from ag_ui_temporal.workflows.thread.agents._adk_session import (
    APP,
    SESSION,
    SESSION_BYTES,
    USER,
    ThreadSession,
    kept,
    session_of,
    without_last_invocation,
)
from ag_ui_temporal.workflows.thread.agents._llm_writer import RunWriter
from ag_ui_temporal.workflows.thread.agents.base import FrameworkAgent, ask_approval, not_paused
from ag_ui_temporal.workflows.thread.agents.llm import AgentFailed
from ag_ui_temporal.workflows.thread.turn import InterruptLimitExceeded, Turn

PAUSED: Final = "adk:paused"
"""`ThreadState.agent_data` key: the ids of the requests the session waits on."""


class AdkAgent(FrameworkAgent[Question]):
    key = KEY

    @property
    def entry(self) -> RegisteredAdkAgent:
        entry = registered_adk_agent(self.name)
        if entry is None:  # a worker without the agent: the task retries until one has it
            raise AgentNotServed(f"no ADK agent {self.name!r} is registered on this worker")
        return entry

    async def on_user_message(self, turn: Turn, text: str) -> None:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        self._ask(turn, await self._run(turn, message))

    async def _resume(self, turn: Turn, group: list[InterruptRecord]) -> list[Question]:
        paused = set(turn.log.state.agent_data.get(PAUSED) or ())
        answers = [answer(record) for record in group if record.data[KEY] in paused]
        if not answers:
            return []  # a user message started anew meanwhile
        _report_answers(turn, answers)
        return await self._run(turn, types.Content(role="user", parts=answers))

    async def _expire(self, turn: Turn, asked: list[Question]) -> list[Question]:
        expired = [unanswered(question, InterruptStatus.EXPIRED) for question in asked]
        _report_answers(turn, expired)
        return await self._run(turn, types.Content(role="user", parts=expired))

    async def _run(self, turn: Turn, message: types.Content) -> list[Question]:
        """One `Runner.run_async`, written into the thread as it goes; its session is kept.
        Returns what it paused to ask a person."""
        entry = self.entry
        data = turn.log.state.agent_data
        data.pop(PAUSED, None)  # answered now, or never (a new message: its calls do not run)
        sessions = ThreadSession(session_of(data.get(SESSION), turn.log.state.thread_id))
        writer = self.writer = RunWriter(turn, self.stale)
        app = App(name=APP, root_agent=entry.agent, plugins=[_Writing(writer)])
        runner = Runner(app=app, session_service=sessions)
        asked: list[Question] = []
        waiting: dict[str, Waiting] = {}
        try:
            async for event in runner.run_async(
                user_id=USER,
                session_id=sessions.session.id,
                new_message=message,
                run_config=RunConfig(max_llm_calls=entry.options.max_llm_calls),
            ):
                asked.extend(pending_hitl_requests(event))
                waiting.update(long_running(event))
                for call_id in _report_results(writer, event):
                    waiting.pop(call_id, None)  # the tool gave its result: nothing to ask
        except (Exception, asyncio.CancelledError) as err:
            if turn.stop_requested:  # stopped (`cancel_run`): what it showed stays, marked
                writer.stop()
            if isinstance(err, FailureError | InterruptLimitExceeded | AgentNotServed):
                raise  # an activity that failed for good (the thread's `RUN_ERROR`), or a stop
            if isinstance(err, Exception) and not turn.stop_requested:
                raise AgentFailed(f"the agent failed: {err}"[:300]) from err
            raise
        finally:
            self.writer = None
        asked += waiting.values()
        if kept(data, sessions.session):
            if asked:
                data[PAUSED] = sorted(question_id(question) for question in asked)
            return asked
        # its last invocation alone is over the budget: what it did stands, but it is not
        # carried on, and it cannot wait for answers (ADK resumes from it)
        workflow.logger.warning(
            "thread %s: a turn over %s bytes", turn.log.state.thread_id, SESSION_BYTES
        )
        kept(data, without_last_invocation(sessions.session))
        if asked:
            _not_paused(turn, writer, asked)
        return []

    def _ask(self, turn: Turn, asked: list[Question]) -> None:
        options = self.entry.options
        for request in asked:
            if isinstance(request, Waiting):
                tool = request.tool
                turn.ask(
                    reason="input_required",
                    message=filled(options.approval_messages.get(tool), request.args)
                    or f"The call to {tool} waits for your answer.",
                    response_schema=dict(NO_SCHEMA),  # what a person says is its result
                    tool_call_id=request.call_id,
                    expires_in=options.input_expires_in,
                    data={KEY: request.call_id, TOOL: tool, "what": f"the call to {tool}"},
                )
                continue
            if request.kind == "input":
                turn.ask(
                    reason="input_required",
                    message=request.message or "The agent needs your input.",
                    response_schema=input_schema(request.response_schema),
                    tool_call_id=request.interrupt_id,
                    expires_in=options.input_expires_in,
                    data={KEY: request.interrupt_id, INPUT: True, "what": "the agent's question"},
                )
                continue
            call = request.original_function_call or {}
            given = call.get("args")
            args: dict[str, Any] = given if isinstance(given, dict) else {}
            tool, call_id = str(call.get("name")), str(call.get("id"))
            ask_approval(turn, self.entry, KEY, request.interrupt_id, call_id, tool, args)


class _Writing(BasePlugin):
    """A runner plugin writing each model response into the thread as it happens, and giving
    the model a rejection's note as the rejected call's error."""

    def __init__(self, writer: RunWriter) -> None:
        super().__init__(name="ag_ui_temporal.thread")
        self.writer = writer

    async def before_model_callback(
        self, *, callback_context: Any, llm_request: LlmRequest
    ) -> LlmResponse | None:
        self.writer.model_request_started([])
        return None

    async def after_model_callback(
        self, *, callback_context: Any, llm_response: LlmResponse
    ) -> LlmResponse | None:
        if not llm_response.partial:
            self.writer.model_responded(_as_response(llm_response))
        return None

    async def before_tool_callback(
        self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any
    ) -> dict[str, Any] | None:
        confirmation = tool_context.tool_confirmation
        if confirmation is None or confirmation.confirmed:
            return None
        note = confirmation.payload.get(NOTE) if isinstance(confirmation.payload, dict) else None
        return {"error": note} if isinstance(note, str) else None  # else ADK's own words

    async def on_tool_error_callback(
        self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any, error: Exception
    ) -> dict[str, Any] | None:
        """A tool's activity cancelled by a stop is the tool cancelled (`raise_if_cancelled`)."""
        raise_if_cancelled(error)
        return None


def _not_paused(turn: Turn, writer: RunWriter, asked: list[Question]) -> None:
    """A run that paused over its session's budget (`base.not_paused`): the calls it gated, or
    that wait for a person, do not go on."""
    calls = {
        str(call["id"]): str(call.get("name"))
        for question in asked
        if isinstance(question, HitlRequest)
        and (call := question.original_function_call or {}).get("id")
    }
    calls.update({q.call_id: q.tool for q in asked if isinstance(q, Waiting)})
    not_paused(turn, writer, calls)


def _report_results(writer: RunWriter, event: Event) -> list[str]:
    """The tool results an event carries, but the stand-ins of calls that wait for a person
    (ADK answers a call it asks about with "requires confirmation" meanwhile); their ids."""
    if event.partial or event.content is None:
        return []
    waiting = set(event.actions.requested_tool_confirmations)
    reported: list[str] = []
    for part in event.content.parts or ():
        response = part.function_response
        if response is None or not response.id or response.id in waiting:
            continue
        result = response.response or {}
        error = result.get("error")
        writer.report_result(
            response.id, _text(result), str(error) if isinstance(error, str) else None
        )
        reported.append(response.id)
    return reported


def _report_answers(turn: Turn, answers: list[types.Part]) -> None:
    """The results a person gave long-running tools' calls (or why nobody did): ADK hears them
    in the message that resumes it, and writes no event of them."""
    for part in answers:
        response = part.function_response
        if response is None or response.id is None or response.name in ADK_CALLS:
            continue
        result = response.response or {}
        error = result.get("error")
        turn.report(response.id, _text(result), str(error) if isinstance(error, str) else None)


def _as_response(response: LlmResponse) -> ModelResponse:
    """A response as the writer takes one: its text first (part 0, as the model activity
    streamed it), then its function calls."""
    parts = response.content.parts if response.content else None
    text = "".join(part.text or "" for part in parts or () if not part.thought)
    calls = [
        ToolCallPart(
            tool_name=call.name or "",
            args=dict(call.args or {}),
            tool_call_id=call.id or "",
        )
        for part in parts or ()
        if (call := part.function_call) is not None
    ]
    return ModelResponse(parts=[TextPart(content=text), *calls])


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)
