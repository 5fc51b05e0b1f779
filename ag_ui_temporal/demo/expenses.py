"""The `submitExpense` tool: starts the expense's `ApprovalChain` (once per tool call).

The chain runs on the thread workers' task queue; its outcome is posted to the
requester's thread, which delivers it on her next run (or at hydration).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import activity
from temporalio.client import Client

from ag_ui_temporal.agents import WorkerResources
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.chains.definitions import ChainInput, expense_chain
from ag_ui_temporal.workflows.chains.starting import start_chain
from ag_ui_temporal.workflows.thread.tool_calls import ToolCallInput, ToolCallOutput


def expense_chain_id(tool_call_id: str) -> str:
    return f"expense-{tool_call_id}"


def expense_activities(worker: WorkerResources) -> list[Callable[..., Any]]:
    """`submitExpense` on a worker (`register_activities`)."""
    return [ExpenseActivities(worker.client, worker.settings).submit_expense]


class ExpenseActivities:
    def __init__(self, client: Client, settings: Settings) -> None:
        self.client = client
        self.settings = settings

    @activity.defn(name="submitExpense")
    async def submit_expense(self, call: ToolCallInput) -> ToolCallOutput:
        args = call.args
        chain_id = expense_chain_id(call.key)
        request = {k: args[k] for k in ("amount", "currency", "description")}
        chain = ChainInput(
            chain_id=chain_id,
            definition=expense_chain(
                self.settings.approval_step_timeout, self.settings.approval_remind_every
            ),
            request=request,
            title=f"expense {args['amount']} {args['currency']} for {args['description']}",
            requester=args.get("requester"),
            requester_thread=args.get("threadId"),
            requester_agent="assistant",
            thread_task_queue=self.settings.task_queue,
            index=self.settings.index_runs,
        )
        first_time = await start_chain(self.client, chain, task_queue=self.settings.task_queue)
        return ToolCallOutput(
            result={"submitted": True, "chainId": chain_id}, first_time=first_time
        )
