"""What an agent can do during a run: speak, call tools, ask a person.

A `Turn` writes AG-UI events into the thread's log (when a run is active; an
agent acting on an expiry between runs only changes the transcript) and keeps
the transcript in step, so the `MESSAGES_SNAPSHOT` always matches what was
streamed. Ids come from `workflow.uuid4()`, so they are stable under replay.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any, Unpack

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from ag_ui.core import (
        AssistantMessage,
        BaseEvent,
        FunctionCall,
        TextMessageContentEvent,
        TextMessageEndEvent,
        TextMessageStartEvent,
        ToolCall,
        ToolCallArgsEvent,
        ToolCallEndEvent,
        ToolCallResultEvent,
        ToolCallStartEvent,
        ToolMessage,
    )

    from ag_ui_temporal.workflows.contract import (
        TOOL_TIMEOUT,
        AgentConfig,
        InterruptFields,
        WireDict,
        wire,
    )
    from ag_ui_temporal.workflows.thread.state import InterruptRecord
    from ag_ui_temporal.workflows.thread.tool_calls import ToolCallInput, ToolCallOutput

from ag_ui_temporal.workflows._common import new_id
from ag_ui_temporal.workflows._interrupt import new_interrupt
from ag_ui_temporal.workflows.patches import (
    INTERRUPT_LIMIT_PATCH,
    TOOL_FAILURE_RESULT_PATCH,
    patched,
)
from ag_ui_temporal.workflows.thread._log import ThreadLog
from ag_ui_temporal.workflows.thread.tool_errors import ToolFailed, failed_for_good, tool_error


class InterruptLimitExceeded(Exception):
    """The agent asked for more interrupts in one run than `max_interrupts_per_run`."""


def message_text(message: WireDict) -> str:
    """The text of an AG-UI message, whether its content is a string or parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return " ".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


class Turn:
    """The agent's handle on the thread for one run (or for a timer between runs)."""

    def __init__(
        self,
        log: ThreadLog,
        run_id: str | None,
        config: AgentConfig,
        principal: str | None = None,
        client_tools: list[WireDict] | None = None,
    ) -> None:
        self.log = log
        self.client_tools = client_tools or []
        """The client's own tools for this run (`RunAgentInput.tools`)."""
        self.run_id = run_id
        self.config = config
        self.principal = principal
        """Who sent the run (None between runs, or when the gateway knows no principal)."""
        self.stop_requested = False
        """The run is being stopped (`cancel_run`, `thread._stop`): an agent cancelled while
        it awaits leaves what it showed in a state the next run can read."""

    @property
    def messages(self) -> list[WireDict]:
        return self.log.state.messages

    def emit(self, event: BaseEvent) -> None:
        if self.run_id is not None:
            event.timestamp = int(workflow.now().timestamp() * 1000)
            self.log.append(wire(event))

    def say(self, text: str) -> None:
        """One complete assistant text message."""
        message_id = new_id("msg")
        self.emit(TextMessageStartEvent(message_id=message_id, role="assistant"))
        self.emit(TextMessageContentEvent(message_id=message_id, delta=text))
        self.emit(TextMessageEndEvent(message_id=message_id))
        self.messages.append(wire(AssistantMessage(id=message_id, content=text)))

    def call_tools(self, calls: list[tuple[str, dict[str, Any]]]) -> list[WireDict]:
        """Announce tool calls (start/args/end) on one assistant message; return them."""
        message_id = new_id("msg")
        tool_calls: list[ToolCall] = []
        for name, args in calls:
            call = ToolCall(
                id=new_id("call"), function=FunctionCall(name=name, arguments=json.dumps(args))
            )
            self.emit(
                ToolCallStartEvent(
                    tool_call_id=call.id, tool_call_name=name, parent_message_id=message_id
                )
            )
            self.emit(ToolCallArgsEvent(tool_call_id=call.id, delta=call.function.arguments))
            self.emit(ToolCallEndEvent(tool_call_id=call.id))
            tool_calls.append(call)
        self.messages.append(wire(AssistantMessage(id=message_id, tool_calls=tool_calls)))
        return [wire(call) for call in tool_calls]

    def ask(
        self,
        *,
        reason: str,
        message: str,
        expires_in: timedelta | None = None,
        data: WireDict | None = None,
        **fields: Unpack[InterruptFields],
    ) -> InterruptRecord:
        """Open an interrupt in this run; the agent hears back through `on_settled`.
        `fields`: as the contract lists them (`InterruptFields`)."""
        assert self.run_id is not None, "interrupts are opened during a run"
        limit = self.config.max_interrupts_per_run
        if self._asked() >= limit and patched(INTERRUPT_LIMIT_PATCH):
            # one RUN_FINISHED must fit in one resume (the gateway's max_resume_entries)
            raise InterruptLimitExceeded(f"an agent may ask at most {limit} interrupts per run")
        # A bad schema is a bug in the agent: `InvalidResponseSchema` fails the workflow
        # task, which keeps the run (a fixed deploy resumes it), rather than open an
        # unanswerable interrupt.
        interrupt = new_interrupt(
            reason=reason,
            message=message,
            expires_at=None if expires_in is None else workflow.now() + expires_in,
            **fields,
        )
        record = InterruptRecord(
            interrupt=interrupt,
            run_id=self.run_id,
            expires_at=interrupt.get("expiresAt"),
            data=data or {},
        )
        self.log.open_interrupt(record)
        return record

    def _asked(self) -> int:
        """Interrupts the agent opened in this run so far."""
        return sum(
            1 for r in self.log.state.interrupts if r.run_id == self.run_id and r.owner is None
        )

    async def execute(self, tool_call_id: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """Run a tool in an activity (once per tool call id) and report its result.

        A tool that fails for good (`_tool_errors`) reports its error as the result,
        then raises `ToolFailed`: the agent says what failed and the run goes on."""
        try:
            output: ToolCallOutput = await workflow.execute_activity(
                tool,
                ToolCallInput(key=tool_call_id, tool=tool, args=args),
                result_type=ToolCallOutput,
                start_to_close_timeout=TOOL_TIMEOUT,
                retry_policy=RetryPolicy(maximum_attempts=self.config.tool_max_attempts),
            )
        except ActivityError as err:
            # threads that failed before the patch replay their RUN_FAILED
            if not failed_for_good(err) or not patched(TOOL_FAILURE_RESULT_PATCH):
                raise
            error = tool_error(err)
            self.report(tool_call_id, json.dumps({"error": error}), error=error["message"])
            raise ToolFailed(err, error) from err.cause
        self.report(tool_call_id, json.dumps(output.result))
        return output.result

    def report(self, tool_call_id: str, content: str, error: str | None = None) -> None:
        """A tool's result: streamed, and a tool message in the transcript."""
        message_id = new_id("tool")
        self.emit(
            ToolCallResultEvent(
                message_id=message_id, tool_call_id=tool_call_id, content=content, role="tool"
            )
        )
        self.messages.append(
            wire(
                ToolMessage(id=message_id, tool_call_id=tool_call_id, content=content, error=error)
            )
        )
