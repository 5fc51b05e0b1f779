"""Tool activities: the only place the demo agent's side effects happen.

Temporal schedules each activity once per workflow decision, but retries it
after a crash or a timeout, possibly on another worker. Every effect is therefore
written to the store's outbox keyed by the tool call id, in the database all
workers share, so a retried attempt finds the effect already done and returns the
same result: the effect happens once per key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from temporalio import activity

from ag_ui_temporal.workflows.thread.tool_calls import ToolCallInput, ToolCallOutput

if TYPE_CHECKING:  # the sandbox shares this module: it must not load SQLAlchemy
    from ag_ui_temporal.agents import WorkerResources
    from ag_ui_temporal.store import Outbox


def demo_tools(worker: WorkerResources) -> list[Callable[..., Any]]:
    """The demo tools' activities on a worker's store (`register_activities`: the demo
    registers them, and the LangGraph example, which sends through `sendEmail`)."""
    from ag_ui_temporal.store import Outbox

    return ToolActivities(Outbox(worker.store)).activities()


class ToolActivities:
    """The demo tools. A real deployment swaps these for calls to real systems."""

    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox

    def activities(self) -> list[Callable[..., Any]]:
        return [self.send_email, self.file_quarterly_report, self.delete_drafts]

    async def record(self, call: ToolCallInput, result: dict[str, Any]) -> ToolCallOutput:
        """The effect, once per key: this result the first time, the first result after."""
        stored = await self.outbox.record(call.key, call.tool, call.args, result)
        return ToolCallOutput(result=stored.result, first_time=stored.first_time)

    @activity.defn(name="sendEmail")
    async def send_email(self, call: ToolCallInput) -> ToolCallOutput:
        result = {"sent": True, "to": call.args["to"], "subject": call.args["subject"]}
        return await self.record(call, result)

    @activity.defn(name="deleteDrafts")
    async def delete_drafts(self, call: ToolCallInput) -> ToolCallOutput:
        return await self.record(call, {"deleted": True})

    @activity.defn(name="fileQuarterlyReport")
    async def file_quarterly_report(self, call: ToolCallInput) -> ToolCallOutput:
        args = call.args
        result = {"filed": True, "quarter": args["quarter"], "year": args["year"]}
        return await self.record(call, result)
