"""An agent run's steps, written into the thread as AG-UI events and transcript messages.

`RunWriter` is the `ThreadSink` of one pydantic-ai agent run. Model deltas arrive from
the model activity (`receive`, the thread's stream signal) while the model produces
them; the whole response arrives when the activity returns (`model_responded`). What
was streamed is never sent again: the response only completes it (the rest of a text,
the end events), so a reconnect, a join and a hydrate read one text. A retried attempt
that repeats what was shown adds only what is new; one that says something else stops
streaming, and the run's closing `MESSAGES_SNAPSHOT` shows the text that counts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ag_ui.core import (
        AssistantMessage,
        FunctionCall,
        TextMessageContentEvent,
        TextMessageEndEvent,
        TextMessageStartEvent,
        ToolCall,
        ToolCallArgsEvent,
        ToolCallEndEvent,
        ToolCallStartEvent,
    )
    from pydantic_ai import DeferredToolResults
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        RetryPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.tools import ToolDefinition
    from pydantic_core import to_jsonable_python
    from temporalio.contrib.workflow_streams import PublishInput

    from ag_ui_temporal.agents.streaming import StreamDelta, entry_payload, parse_topic
    from ag_ui_temporal.workflows.contract import STOPPED_METADATA_KEY, wire

from ag_ui_temporal.workflows._common import new_id
from ag_ui_temporal.workflows.thread.turn import InterruptLimitExceeded, Turn

STOPPED = {STOPPED_METADATA_KEY: True}
"""The metadata of a message whose run was stopped while it was written."""
STOPPED_CALL = {
    "type": "RunCancelled",
    "message": "the run was stopped before this call returned (it may have taken effect)",
}
"""The result of a call whose run was stopped before it returned (a failed tool's shape)."""


@dataclass
class _Part:
    """One part of the response in flight, as far as clients have seen it."""

    kind: Literal["text", "tool"]
    tool_call_id: str | None = None
    tool_name: str | None = None
    shown: str = ""
    attempt_text: str = ""
    """What the current attempt of the model activity sent for this part."""
    started: bool = False
    diverged: bool = False
    """A retried attempt said something else than what was shown: show no more of it."""


@dataclass
class _Response:
    """The model request in flight: its message id and what its activity streamed."""

    message_id: str
    activity_id: str | None = None
    attempt: int = 0
    parts: dict[int, _Part] = field(default_factory=dict)
    calls: int = 0
    """Tool-call parts among `parts`."""
    text_started: bool = False
    publishers: dict[str, int] = field(default_factory=dict)


class RunWriter:
    def __init__(self, turn: Turn, stale: set[str] | None = None) -> None:
        self.turn = turn
        self.stale = set() if stale is None else stale
        """Model activities of stopped requests (shared by the agent's writers): one may go on
        publishing until it hears of the stop, into a later run."""
        self.tool_defs: dict[str, ToolDefinition] = {}
        self.response: _Response | None = None
        self.reported = {str(m.get("toolCallId")) for m in turn.messages if m.get("role") == "tool"}
        """Tool calls whose result is in the transcript already."""
        self.calls: list[str] = []
        """Tool calls the model made in this agent run."""

    # -- ThreadSink (hooks in workflow code) ------------------------------------------

    def tools_offered(self, tool_defs: list[ToolDefinition]) -> None:
        self.tool_defs.update({tool.name: tool for tool in tool_defs})

    def model_request_started(self, messages: list[ModelMessage]) -> None:
        if messages and isinstance(messages[-1], ModelRequest):
            self.report_results([messages[-1]])  # the tools that ran since the last response
        self.response = _Response(message_id=new_id("msg"))

    def model_responded(self, response: ModelResponse) -> None:
        streamed = self.response or _Response(message_id=new_id("msg"))
        self.response = None
        text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
        calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
        limit = self.turn.config.max_interrupts_per_run
        if len(calls) > limit:
            # before pydantic-ai handles a single call: thousands of them outlast the
            # workflow task's deadlock timeout (the model activity refuses them first)
            raise InterruptLimitExceeded(f"the model made more than {limit} tool calls at once")
        self._complete_text(streamed, response)
        for index, part in enumerate(response.parts):
            if isinstance(part, ToolCallPart):
                self._complete_call(streamed, streamed.parts.pop(index, None), part)
        for left in streamed.parts.values():  # a diverged attempt's calls: close them
            if left.kind == "tool" and left.started and left.tool_call_id:
                self.turn.emit(ToolCallEndEvent(tool_call_id=left.tool_call_id))
        if text or calls:
            tool_calls = [
                ToolCall(
                    id=c.tool_call_id,
                    function=FunctionCall(name=c.tool_name, arguments=c.args_as_json_str()),
                )
                for c in calls
            ]
            message = AssistantMessage(
                id=streamed.message_id, content=text or None, tool_calls=tool_calls or None
            )
            self.turn.messages.append(wire(message))
        self.calls.extend(c.tool_call_id for c in calls)

    def stop(self, deferred: DeferredToolResults | None = None) -> None:
        """The run was stopped while this agent run went on. The text clients were shown of
        the response in flight stays: its message ends, marked stopped, and joins the
        transcript as shown. A tool call shown in part is only closed: its arguments may not
        even be JSON, and it never ran. Each call made (or, `deferred`, answered) in this
        agent run that has no result yet gets one saying the run stopped before it returned:
        the transcript the next run reads has no call left open."""
        response, self.response = self.response, None
        if response is not None:
            self._stop_response(response)
            if response.activity_id is not None:
                self.stale.add(response.activity_id)
        answered = list(deferred.approvals) + list(deferred.calls) if deferred else []
        for call_id in [*answered, *self.calls]:
            self.report_result(
                call_id, json.dumps({"error": STOPPED_CALL}), STOPPED_CALL["message"]
            )

    def _stop_response(self, response: _Response) -> None:
        parts = [response.parts[index] for index in sorted(response.parts)]
        text = "".join(part.shown for part in parts if part.kind == "text")
        if response.text_started:
            self.turn.emit(TextMessageEndEvent(message_id=response.message_id, metadata=STOPPED))
            message = AssistantMessage(id=response.message_id, content=text, metadata=STOPPED)
            self.turn.messages.append(wire(message))
        for part in parts:
            if part.kind == "tool" and part.started and part.tool_call_id:
                self.turn.emit(ToolCallEndEvent(tool_call_id=part.tool_call_id))

    def report_results(self, messages: list[ModelMessage]) -> None:
        """Tool results (and retry prompts for a call) not yet in the transcript."""
        for message in messages:
            if not isinstance(message, ModelRequest):
                continue
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    self.report_result(
                        part.tool_call_id, _content(part.content), _error(part.content)
                    )
                elif isinstance(part, RetryPromptPart) and part.tool_name is not None:
                    text = part.model_response()
                    self.report_result(part.tool_call_id, text, error=text)

    # -- the stream signal ----------------------------------------------------------------

    def receive(self, batch: PublishInput) -> None:
        response = self.response
        if response is None:
            return  # between model requests: a stale or duplicated batch
        seen = response.publishers.get(batch.publisher_id, -1)
        if batch.publisher_id and batch.sequence <= seen:
            return  # a flush the client retried
        response.publishers[batch.publisher_id] = batch.sequence
        touched: dict[int, _Part] = {}  # one event per part per batch, not one per token
        for entry in batch.items:
            source = parse_topic(entry.topic)
            if source is None or not _current(response, *source, self.stale):
                continue
            payload = entry_payload(entry)
            delta = workflow.payload_converter().from_payload(payload, StreamDelta)
            part = response.parts.get(delta.part)
            if part is None:
                if delta.kind == "tool" and self._calls_full(response):
                    continue  # never shown: the response is refused when it ends
                part = response.parts[delta.part] = _Part(
                    delta.kind, delta.tool_call_id, delta.tool_name
                )
                response.calls += delta.kind == "tool"
            if part.kind == delta.kind:
                part.attempt_text += delta.delta
                touched[delta.part] = part
        for part in touched.values():
            self._show(response, part)

    def _calls_full(self, response: _Response) -> bool:
        limit = self.turn.config.max_interrupts_per_run
        return response.calls >= limit

    def _show(self, response: _Response, part: _Part) -> None:
        """What the part's current attempt adds to what clients have seen, if anything."""
        if part.diverged or not part.attempt_text.startswith(part.shown):
            part.diverged = part.diverged or not part.shown.startswith(part.attempt_text)
            return
        new = part.attempt_text[len(part.shown) :]
        part.shown = part.attempt_text
        if part.kind == "text":
            self._text(response, new)
        else:
            self._args(response.message_id, part, new)

    # -- events -----------------------------------------------------------------------------

    def _text(self, response: _Response, delta: str) -> None:
        if not delta:
            return
        if not response.text_started:
            response.text_started = True
            self.turn.emit(TextMessageStartEvent(message_id=response.message_id, role="assistant"))
        self.turn.emit(TextMessageContentEvent(message_id=response.message_id, delta=delta))

    def _args(self, message_id: str, part: _Part, delta: str) -> None:
        if not part.started and part.tool_call_id and part.tool_name:
            part.started = True
            self.turn.emit(
                ToolCallStartEvent(
                    tool_call_id=part.tool_call_id,
                    tool_call_name=part.tool_name,
                    parent_message_id=message_id,
                )
            )
        if delta and part.started and part.tool_call_id:
            self.turn.emit(ToolCallArgsEvent(tool_call_id=part.tool_call_id, delta=delta))

    def _complete_text(self, streamed: _Response, response: ModelResponse) -> None:
        for index, part in enumerate(response.parts):
            if not isinstance(part, TextPart):
                continue
            shown = streamed.parts.pop(index, None)
            if shown is None or shown.kind != "text":
                self._text(streamed, part.content)
            elif not shown.diverged and part.content.startswith(shown.shown):
                self._text(streamed, part.content[len(shown.shown) :])
        if streamed.text_started:
            self.turn.emit(TextMessageEndEvent(message_id=streamed.message_id))

    def _complete_call(self, streamed: _Response, shown: _Part | None, call: ToolCallPart) -> None:
        args = call.args_as_json_str()
        if shown is None or shown.tool_call_id != call.tool_call_id or not shown.started:
            if shown is not None and shown.started and shown.tool_call_id:
                self.turn.emit(ToolCallEndEvent(tool_call_id=shown.tool_call_id))
            shown = _Part("tool", call.tool_call_id, call.tool_name)
        rest = args[len(shown.shown) :] if args.startswith(shown.shown) else ""
        self._args(streamed.message_id, shown, rest)
        self.turn.emit(ToolCallEndEvent(tool_call_id=call.tool_call_id))

    def report_result(self, tool_call_id: str, content: str, error: str | None = None) -> None:
        """A call's result: streamed, and a tool message in the transcript (once per call)."""
        if tool_call_id not in self.reported:
            self.reported.add(tool_call_id)
            self.turn.report(tool_call_id, content, error)


def _current(response: _Response, activity_id: str, attempt: int, stale: set[str]) -> bool:
    """Whether a delta comes from the request in flight (its activity, latest attempt). A
    stopped request's activity may still publish for a moment: it is `stale` once seen, and
    older than the request in flight anyway (a workflow's activity ids count up)."""
    if activity_id in stale:
        return False
    if response.activity_id is None or _newer(activity_id, response.activity_id):
        response.activity_id, response.attempt = activity_id, 0
        for part in response.parts.values():
            part.attempt_text = ""
    if activity_id != response.activity_id or attempt < response.attempt:
        return False
    if attempt > response.attempt:  # a retry: it streams from its first token again
        response.attempt = attempt
        for part in response.parts.values():
            part.attempt_text = ""
    return True


def _newer(activity_id: str, than: str) -> bool:
    return activity_id.isdigit() and than.isdigit() and int(activity_id) > int(than)


def _error(value: Any) -> str | None:
    """A tool that failed for good answers `{"error": {"type", "message"}}` (the demo's
    tools do): its tool message says so in `error` too."""
    error = value.get("error") if isinstance(value, dict) else None
    return str(error.get("message")) if isinstance(error, dict) else None


def _content(value: Any) -> str:
    """A tool's result as the transcript's tool message holds it (JSON unless text)."""
    return value if isinstance(value, str) else json.dumps(to_jsonable_python(value))
