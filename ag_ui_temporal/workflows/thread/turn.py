"""What an agent can do during a run: speak, report tool results, ask a person.

A `Turn` writes AG-UI events into the thread's log (when a run is active; an
agent acting on an expiry between runs only changes the transcript) and keeps
the transcript in step, so the `MESSAGES_SNAPSHOT` always matches what was
streamed. Ids come from `workflow.uuid4()`, so they are stable under replay.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Final, Unpack

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ag_ui.core import (
        AssistantMessage,
        BaseEvent,
        CustomEvent,
        TextMessageContentEvent,
        TextMessageEndEvent,
        TextMessageStartEvent,
        ToolCallResultEvent,
        ToolMessage,
    )

    from ag_ui_temporal.workflows.contract import (
        AgentConfig,
        InterruptFields,
        WireDict,
        wire,
    )
    from ag_ui_temporal.workflows.contract.standing import STANDING_METADATA_KEY
    from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord

from ag_ui_temporal.workflows._common import new_id
from ag_ui_temporal.workflows._interrupt import new_interrupt
from ag_ui_temporal.workflows.thread import _standing
from ag_ui_temporal.workflows.thread._log import ThreadLog

STANDING_PER_RUN: Final = 20
"""Calls one run may make on standing decisions (`thread._standing`); past them a person is
asked: a model that keeps calling a tool a standing decision refuses (or approves) is
stopped by a person, not by `max_interrupts_per_run` after as many model calls."""


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
        self.show_text(message_id, text)
        self.messages.append(wire(AssistantMessage(id=message_id, content=text)))

    def show_text(self, message_id: str, text: str) -> None:
        """Stream an assistant message whole (the transcript holds it, or is about to)."""
        self.emit(TextMessageStartEvent(message_id=message_id, role="assistant"))
        self.emit(TextMessageContentEvent(message_id=message_id, delta=text))
        self.emit(TextMessageEndEvent(message_id=message_id))

    def ask(
        self,
        *,
        reason: str,
        message: str,
        expires_in: timedelta | None = None,
        data: WireDict | None = None,
        **fields: Unpack[InterruptFields],
    ) -> InterruptRecord:
        """Open an interrupt in this run; the agent hears back through `on_settled` (at once,
        in this run, for a call a standing decision answered: `thread._standing`).
        `fields`: as the contract lists them (`InterruptFields`)."""
        assert self.run_id is not None, "interrupts are opened during a run"
        limit = self.config.max_interrupts_per_run
        if self._asked() >= limit:
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
        record = InterruptRecord.asked(interrupt, self.run_id, data or {})
        self.log.open_interrupt(record)
        self._answer_at_once(record)
        return record

    def _answer_at_once(self, record: InterruptRecord) -> None:
        """A call a standing decision covers is answered as it is asked (`STANDING_PER_RUN` a
        run at most), and the client told: what it shows of a call that went ahead (or did
        not) without asking."""
        state = self.log.state
        done = sum(
            1 for r in state.interrupts if r.run_id == self.run_id and r.resolved_via == "standing"
        )
        if done >= STANDING_PER_RUN:
            return
        decision = _standing.answer_at_once(state, record, workflow.now())
        if decision is None:
            return
        value = {
            "interruptId": record.id,
            "toolCallId": record.interrupt.get("toolCallId"),
            "standingId": decision.id,
            "approved": decision.approved,
        }
        self.emit(CustomEvent(name=STANDING_METADATA_KEY, value=value))

    def _asked(self) -> int:
        """Interrupts the agent opened in this run so far."""
        return sum(
            1 for r in self.log.state.interrupts if r.run_id == self.run_id and r.owner is None
        )

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
