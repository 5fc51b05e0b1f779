"""The interface between the thread workflow and the agent that talks in it.

An agent is event-driven rather than a long-lived coroutine: everything it
needs to continue lives in the thread's data (interrupt records carry the
agent's own `data`). So a thread can continue-as-new, or be picked up by new
worker code, while it waits days for a person.

Beside the interface (`Agent`), what its hosts share: a batch of answers (`batch`), why a
call did not run (`why_not`, `not_paused`), and the frame of an agent framework's host
(`FrameworkAgent`: LangGraph's, the OpenAI Agents SDK's, ADK's) with its approval
(`ask_approval`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Final, Generic, Protocol, TypeVar

from temporalio import workflow
from temporalio.contrib.workflow_streams import PublishInput

from ag_ui_temporal.workflows.contract import (
    PENDING_STATUSES,
    TOOL_CALL_METADATA_KEY,
    InterruptStatus,
    tool_approval_schema,
)
from ag_ui_temporal.workflows.contract.tools import WHY_NOT, approval, filled
from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord
from ag_ui_temporal.workflows.thread.turn import Turn

if TYPE_CHECKING:
    from ag_ui_temporal.workflows.thread.agents._llm_writer import RunWriter

UNATTENDED_ROUNDS: Final = 10
"""How often an agent resumed by an expiry between runs may ask again (each question is
answered at once as expired: nobody is there) before the thread stops resuming it."""


def batch(turn: Turn, settled: list[InterruptRecord], key: str) -> list[InterruptRecord] | None:
    """The batch `settled` belong to, once all of it is settled (rule 3: the agent goes on from
    one batch at once), marked as acted on; None while some of it awaits an answer. A batch
    is every interrupt the agent opened (its own: `key` in its `data`) in the runs that asked
    these and did not act on yet: a run whose batch a standing decision answered at once goes
    on, and may ask again, in the same run."""
    runs = {record.run_id for record in settled}
    group = [
        record
        for record in turn.log.state.interrupts
        if record.run_id in runs
        and record.owner is None
        and key in record.data
        and not record.acted
    ]
    if any(record.status in PENDING_STATUSES for record in group):
        return None
    for record in group:
        record.acted = True
    return group


ASKED_WITH_UNANSWERED: Final = "the calls asked with it were not answered"
"""Why an approved call did not run: a standing decision approved it, and the rest of its
batch expired between runs."""


def why_not(record: InterruptRecord) -> str:
    """Why the call `record` asked about will not run, as the model (and the user) hears it."""
    answer = record.resolution
    decided = approval(answer.payload) if answer is not None else None
    if record.status == InterruptStatus.RESOLVED and decided is not None and decided.approved:
        return ASKED_WITH_UNANSWERED
    return WHY_NOT[record.status]


TOO_LARGE_TO_PAUSE: Final = "the run grew too large to pause for an answer"
"""Why the calls of a run whose paused state is over its framework's budget (the SDK's
`RunState`, ADK's session) were not asked about."""


def not_paused(turn: Turn, writer: RunWriter, calls: Mapping[str, str]) -> None:
    """A run that paused over its budget cannot wait for the answers: the calls it would ask
    about (`calls`: tool name by call id) are not asked about and do not run; each gets why as
    its result, and the user a sentence. What the run did before stands."""
    workflow.logger.warning("thread %s: %s", turn.log.state.thread_id, TOO_LARGE_TO_PAUSE)
    for call_id in sorted(calls):
        writer.report_result(call_id, TOO_LARGE_TO_PAUSE)
    names = ", ".join(sorted(set(calls.values())))
    turn.say(f"I did not carry out the call to {names}: {TOO_LARGE_TO_PAUSE}.")


class Agent(Protocol):
    """Deterministic workflow-side agent code. I/O belongs in activities
    (`workflow.execute_activity`)."""

    async def on_user_message(self, turn: Turn, text: str) -> None:
        """A new user message arrived in a run."""
        ...

    async def on_client_results(self, turn: Turn) -> None:
        """The client ran tools of its own the agent called, and sent their results
        (tool messages, already in the transcript)."""
        ...

    def on_stream(self, batch: PublishInput) -> None:
        """Deltas a model activity of this agent published (the thread's stream signal)."""
        ...

    async def on_settled(self, turn: Turn, settled: list[InterruptRecord]) -> None:
        """Interrupts this agent opened were resolved, cancelled or expired.

        During a resume all of one run's answers arrive together; an expiry arrives
        between runs (`turn.run_id is None`), when only the transcript can change.
        """
        ...

    def on_run_end(
        self, turn: Turn, *, posted: int, settled: int, waiting: list[InterruptRecord]
    ) -> None:
        """Called (synchronously) at the end of every run, after offered interrupts were
        delivered: `posted` messages were streamed, `settled` answers applied, `waiting`
        interrupts await an answer. It may still speak (`turn.say`); it must not await."""
        ...


Asked = TypeVar("Asked")
"""What a framework pauses to ask a person: its own kind of question."""


class FrameworkAgent(Generic[Asked]):
    """What the host of an agent framework (a LangGraph graph's, an OpenAI Agents SDK or Google
    ADK agent's) does alike in a thread: the deltas its model activities publish go to the
    run's writer; it offers the client's tools nothing; it goes on from a batch of answers once
    all of it is settled (rule 3, `batch`). Between runs nobody is there to answer: whatever it
    asks then is answered at once as expired, at most `UNATTENDED_ROUNDS` times.

    A framework says how it goes on from a settled batch (`_resume`), how it goes on when its
    questions go unanswered (`_expire`), each returning what it asks next, and how it asks
    (`_ask`)."""

    key: ClassVar[str]
    """The `InterruptRecord.data` key of the interrupts it opens: the framework's id of what
    each asks about."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.writer: RunWriter | None = None
        self.stale: set[str] = set()  # stopped requests' model activities (`RunWriter.stale`)

    def on_stream(self, batch: PublishInput) -> None:
        if self.writer is not None:
            self.writer.receive(batch)

    async def on_client_results(self, turn: Turn) -> None:
        """It offers the client's tools nothing to call (`RunAgentInput.tools`)."""

    async def on_settled(self, turn: Turn, settled: list[InterruptRecord]) -> None:
        group = batch(turn, settled, self.key)
        if group is None:
            return  # it asked several things at once: go on once all are settled
        asked = await self._resume(turn, group)
        if turn.run_id is not None:
            self._ask(turn, asked)
            return
        for _round in range(UNATTENDED_ROUNDS):
            if not asked:
                return
            asked = await self._expire(turn, asked)

    def on_run_end(
        self, turn: Turn, *, posted: int, settled: int, waiting: list[InterruptRecord]
    ) -> None:
        """It said what it had to while it ran."""

    async def _resume(self, turn: Turn, group: list[InterruptRecord]) -> list[Asked]:
        """Go on from the settled batch `group`; what it asks next (nothing: it did not go
        on)."""
        raise NotImplementedError

    async def _expire(self, turn: Turn, asked: list[Asked]) -> list[Asked]:
        """Go on with `asked`, asked between runs, unanswered; what it asks next."""
        raise NotImplementedError

    def _ask(self, turn: Turn, asked: list[Asked]) -> None:
        raise NotImplementedError


def ask_approval(
    turn: Turn, entry: Any, key: str, asked: str, call_id: str, tool: str, args: dict[str, Any]
) -> None:
    """Ask a person to approve the call `call_id` of `tool` with `args`, which a framework that
    runs a call with the model's arguments asks about (the OpenAI Agents SDK, ADK): no
    `editedArgs`. `entry`, its registration, has the `options` (`approval_messages`,
    `reject_payload`, `approval_expires_in`) and `standing_approvals`; the interrupt's `data`
    has `key`: `asked`, the framework's id of the question."""
    options = entry.options
    turn.ask(
        reason="tool_call",
        message=filled(options.approval_messages.get(tool), args) or f"Approve {tool}?",
        response_schema=tool_approval_schema(
            None, options.reject_payload, entry.standing_approvals
        ),
        tool_call_id=call_id,
        expires_in=options.approval_expires_in,
        data={key: asked, "toolCallId": call_id, "what": f"the call to {tool}"},
        # the call itself, for clients: the gateway makes it TanStack's binding
        metadata={TOOL_CALL_METADATA_KEY: {"name": tool, "arguments": args}},
    )
