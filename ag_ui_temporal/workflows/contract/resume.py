"""The rules a resume's entries are decided by, against the interrupts they name.

The thread applies them to the interrupts it holds (`workflows.thread._resume`, which
checks the thread's own rules first and the open interrupts' answers after); the gateway
to those that left the thread for the store's archive (`workflows.contract.replay`). One
definition, so a repeated resume is decided alike however old its interrupts are.

Pure and deterministic: the thread's update validator and its handler run them in the
workflow (the protocol is passed through the sandbox).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from ag_ui_temporal.workflows.contract.access import INBOX_AGENT, may_answer
from ag_ui_temporal.workflows.contract.errors import ErrorCode, InterruptError, RunRejection
from ag_ui_temporal.workflows.contract.runs import ResumeItem, RunRequest
from ag_ui_temporal.workflows.contract.runs import answer_digest as answer_digest
from ag_ui_temporal.workflows.contract.view import InterruptStatus


def takes_partial(agent: str) -> bool:
    """Whether a thread of `agent` takes a partial resume (`RunRequest.partial`, which only
    the gateway's decision paths send): the inbox, whose interrupts are independent offers
    of producers, each answered on its own. Any other agent needs a run's deferred answers
    together: a resume must cover every open interrupt (`PARTIAL_RESUME`)."""
    return agent == INBOX_AGENT


class Answerable(Protocol):
    """An interrupt as a resume entry is checked against it: one the thread holds
    (`workflows.thread.interrupts.InterruptRecord`) or one it archived
    (`replay.ArchivedInterrupt`)."""

    @property
    def run_id(self) -> str:
        """The run that delivered it ("" while only offered)."""
        ...

    @property
    def status(self) -> InterruptStatus: ...

    @property
    def allowed_resolvers(self) -> list[str] | None: ...

    @property
    def resolved_by_run(self) -> str | None: ...

    @property
    def settled(self) -> bool:
        """No longer takes an answer: an entry may only repeat the one applied."""
        ...

    @property
    def answer_digest(self) -> str | None:
        """`answer_digest` of the answer applied (None: none was)."""
        ...


R = TypeVar("R", bound=Answerable)


@dataclass
class Entries(Generic[R]):
    """A resume's entries, sorted by the rules."""

    errors: list[InterruptError] = field(default_factory=list)
    repeats: list[R] = field(default_factory=list)
    """Settled interrupts whose applied answer an entry repeats."""
    answering: list[tuple[R, ResumeItem]] = field(default_factory=list)
    """Interrupts that take an answer, each with the entry that gives it."""

    @property
    def replayed(self) -> R | None:
        """When every entry repeats an applied answer: the last, whose run answers the resume."""
        every = self.repeats and not self.answering and not self.errors
        return self.repeats[-1] if every else None


def _takes_any(record: Any, entry: ResumeItem) -> InterruptError | None:
    return None


def sort_entries(
    request: RunRequest,
    known: Mapping[str, R],
    check: Callable[[R, ResumeItem], InterruptError | None] = _takes_any,
) -> Entries[R]:
    """Per entry, in order: unknown (or offered, so no client can know its id yet), not the
    principal's to answer, a repeat of the answer applied or another answer to a settled
    interrupt (a resolve of an expired one is `INTERRUPT_EXPIRED`, also once a cancel
    acknowledged it); else an answer to an interrupt that takes one, refused if `check` says
    so."""
    entries: Entries[R] = Entries()
    for entry in request.resume:
        record = known.get(entry.interrupt_id)
        if record is None or record.status == InterruptStatus.OFFERED:
            entries.errors.append(item(ErrorCode.UNKNOWN_INTERRUPT_ID, entry, "no such interrupt"))
        elif not may_answer(record.allowed_resolvers, request.principal, request.groups):
            who = "an anonymous client" if request.principal is None else repr(request.principal)
            entries.errors.append(item(ErrorCode.FORBIDDEN, entry, f"{who} may not answer it"))
        elif record.settled:
            if record.answer_digest == answer_digest(entry.status, entry.payload):
                entries.repeats.append(record)
            elif record.status == InterruptStatus.EXPIRED and entry.status == "resolved":
                message = "it expired before this answer"
                entries.errors.append(item(ErrorCode.INTERRUPT_EXPIRED, entry, message))
            else:
                message = f"interrupt was already {record.status.value} with another answer"
                entries.errors.append(item(ErrorCode.INTERRUPT_ALREADY_RESOLVED, entry, message))
        elif (problem := check(record, entry)) is not None:
            entries.errors.append(problem)
        else:
            entries.answering.append((record, entry))
    return entries


def refusal(errors: list[InterruptError], known: Mapping[str, Answerable]) -> RunRejection:
    """The refusal of a resume with item `errors`: the first one's code, every message."""
    return RunRejection(
        code=errors[0].code,
        message="; ".join(f"{e.interrupt_id}: {e.message}" for e in errors),
        interrupt_errors=errors,
        interrupted_run_id=interrupted_run(known, errors),
    )


def interrupted_run(known: Mapping[str, Answerable], errors: list[InterruptError]) -> str | None:
    """The run that delivered the first erring interrupt `known` holds (TanStack's
    `interruptedRunId`)."""
    for error in errors:
        record = None if error.interrupt_id is None else known.get(error.interrupt_id)
        if record is not None:
            return record.run_id
    return None


def item(code: ErrorCode, entry: ResumeItem, message: str) -> InterruptError:
    """An error about one entry."""
    return InterruptError(scope="item", code=code, message=message, interrupt_id=entry.interrupt_id)
