"""Error codes and refusals: what a refused run or item tells the client.

The workflow raises them (`ApplicationError.type` is the code, the details a
`RunRejection`); the gateway maps them to `RUN_ERROR` and TanStack's
`interruptErrors` without re-deciding anything.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field


class ErrorCode(StrEnum):
    """Stable `RUN_ERROR.code` values. Raised as `ApplicationError.type` by the workflow."""

    RESUME_REQUIRED = "RESUME_REQUIRED"
    UNKNOWN_INTERRUPT_ID = "UNKNOWN_INTERRUPT_ID"
    PARTIAL_RESUME = "PARTIAL_RESUME"
    INVALID_PAYLOAD = "INVALID_PAYLOAD"
    INTERRUPT_EXPIRED = "INTERRUPT_EXPIRED"
    INTERRUPT_ALREADY_RESOLVED = "INTERRUPT_ALREADY_RESOLVED"
    INVALID_RESUME = "INVALID_RESUME"
    AGENT_MISMATCH = "AGENT_MISMATCH"
    INTERRUPT_WITHDRAWN = "INTERRUPT_WITHDRAWN"
    FORBIDDEN = "FORBIDDEN"
    RUN_FAILED = "RUN_FAILED"
    UNAVAILABLE = "UNAVAILABLE"
    LIMIT_EXCEEDED = "LIMIT_EXCEEDED"
    """The agent asked for more interrupts in one run than `max_interrupts_per_run`."""
    RUN_CANCELLED = "RUN_CANCELLED"
    """The run was stopped (`POST /agents/{agent}/threads/{threadId}/runs/{runId}/cancel`):
    its stream and every join of it end with this code."""
    RUN_ID_TAKEN = "RUN_ID_TAKEN"
    """A decision (link or decision API) was answered by another run sent under its run id,
    which did not settle the interrupt: nothing was applied. Never a `RUN_ERROR` of a run."""
    RUN_ID_REUSED = "RUN_ID_REUSED"
    """A run id the thread has run already, sent with another body that is no continuation
    of that run (`workflows.contract.runs.run_digest`): the earlier run's events are not
    this request's answer, and nothing of it was applied."""


class InterruptError(BaseModel):
    """One item- or batch-level problem, shaped for TanStack's `interruptErrors`."""

    scope: Literal["item", "batch"]
    code: ErrorCode
    message: str
    interrupt_id: str | None = None
    """Set for item errors."""
    interrupt_ids: list[str] | None = None
    """Set for batch errors: the interrupts the problem concerns."""


class RunRejection(BaseModel):
    """Why a run was refused; the details of the `ApplicationError` the workflow raises."""

    code: ErrorCode
    message: str
    interrupt_errors: list[InterruptError] = Field(default_factory=list)
    interrupted_run_id: str | None = None
    """The run whose interrupts the errors concern (TanStack binds items to it)."""


DROPPED_RUN = RunRejection(
    code=ErrorCode.RUN_FAILED,
    message="the thread could not process this run (its workflow task kept failing): "
    "it was dropped, nothing of it was kept, and the thread takes the next message",
)
"""A run the gateway's stuck-thread watch dropped: what its client is told then, and what the
thread answers any copy of it that arrives later (it never lands)."""


class AgentNotServed(RuntimeError):
    """The thread's agent is not on the worker that took its workflow task (an agent or graph
    the gateway serves, mid-rollout): the task fails, and Temporal retries it until a worker
    that has the agent takes it. No fault of a run's: the gateway's stuck-thread watch
    recognises the task's failure by this class's name and leaves the thread alone. A plain
    exception, so it fails the task, never the workflow."""
