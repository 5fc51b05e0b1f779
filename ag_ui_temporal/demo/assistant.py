"""The demo agent `assistant` as a pydantic-ai agent: the same tools, the same people.

- `sendEmail`: a person approves each call (and may edit it first);
- `fileQuarterlyReport`: a person fills in the figures (a form that expires);
- `submitExpense`: a person approves, then the expense's approval chain starts;
- `deleteDrafts`: a person confirms (yes or no) before a step that cannot be undone;
- `orderDesk`: hands order questions to the sub-agent `orders` (`demo.orders`), whose
  `cancelOrder` a person approves: the interrupt says which agent asks.

The tools take the schemas of `demo.tools` as they are (TanStack AI clients
recognise a tool by the hash of its schema) and run in workflow code, each starting the
thread's own tool activity keyed by its call id, so its effect happens once whatever is
retried or replayed, and a tool that fails for good becomes the call's result.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent, ModelRetry, RunContext, Tool
from pydantic_ai.models import Model
from pydantic_ai.models.function import FunctionModel
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

from ag_ui_temporal.agents.delegation import delegate
from ag_ui_temporal.agents.thread import IN_WORKFLOW, ThreadDeps, ask_person, thread_capabilities
from ag_ui_temporal.demo.orders import build_orders, orders_offline_model
from ag_ui_temporal.demo.tools import (
    FILE_QUARTERLY_REPORT,
    SEND_EMAIL,
    SUBMIT_EXPENSE,
    ToolSpec,
)
from ag_ui_temporal.workflows.contract import TOOL_TIMEOUT
from ag_ui_temporal.workflows.schema import payload_problem
from ag_ui_temporal.workflows.thread.tool_calls import ToolCallInput, ToolCallOutput
from ag_ui_temporal.workflows.thread.tool_errors import failed_for_good, tool_error

INSTRUCTIONS = (
    "You are a helpful assistant. You can send emails, file the quarterly report (a person "
    "fills in the figures) and submit expenses for reimbursement. A person approves every "
    "email and expense before it goes out. Hand anything about orders to the order desk."
)
ORDER_DESK = "orderDesk"
"""The assistant's delegation to the sub-agent `orders`."""


async def tool_activity(
    ctx: RunContext[ThreadDeps], tool: str, args: dict[str, Any]
) -> dict[str, Any]:
    """Run the thread's `tool` activity for this call (once per call id); a tool that failed
    for good answers `{"error": {"type", "message"}}`, for the model to tell the user."""
    try:
        output: ToolCallOutput = await workflow.execute_activity(
            tool,
            ToolCallInput(key=ctx.tool_call_id or "", tool=tool, args=args),
            result_type=ToolCallOutput,
            start_to_close_timeout=TOOL_TIMEOUT,
            retry_policy=RetryPolicy(maximum_attempts=ctx.deps.tool_max_attempts),
        )
    except ActivityError as err:
        if not failed_for_good(err):
            raise
        return {"error": tool_error(err)}
    return output.result


async def send_email(ctx: RunContext[ThreadDeps], **args: Any) -> dict[str, Any]:
    return await tool_activity(ctx, SEND_EMAIL.name, args)


async def file_quarterly_report(ctx: RunContext[ThreadDeps], **figures: Any) -> dict[str, Any]:
    result = await tool_activity(ctx, FILE_QUARTERLY_REPORT.name, figures)
    return result if "error" in result else {**result, "revenue": figures["revenue"]}


async def delete_drafts(ctx: RunContext[ThreadDeps]) -> dict[str, Any]:
    return await tool_activity(ctx, "deleteDrafts", {})


DELETE_DRAFTS = ToolSpec(
    name="deleteDrafts",
    description="Delete all of the user's email drafts (it cannot be undone).",
    parameters={"type": "object", "properties": {}, "additionalProperties": False},
    human="approval",
)
"""Not a TanStack-registered tool: a person confirms it, no approval envelope."""


async def submit_expense(ctx: RunContext[ThreadDeps], **args: Any) -> dict[str, Any]:
    expense = {**args, "requester": ctx.deps.principal, "threadId": ctx.deps.thread_id}
    result = await tool_activity(ctx, SUBMIT_EXPENSE.name, expense)
    return result if "error" in result else {**result, **args}


def _tool(spec: ToolSpec, function: Any, metadata: dict[str, Any], **options: Any) -> Tool[Any]:
    tool: Tool[Any] = Tool.from_schema(
        function,
        name=spec.name,
        description=spec.description,
        json_schema=spec.parameters,
        takes_ctx=True,
        args_validator=_valid_against(spec.parameters) if not options.get("fills") else None,
    )
    tool.requires_approval = True
    tool.metadata = {**IN_WORKFLOW, **metadata}
    return tool


def _valid_against(schema: dict[str, Any]) -> Any:
    def validate(ctx: RunContext[ThreadDeps], **args: Any) -> None:
        if (problem := payload_problem(schema, args)) is not None:
            raise ModelRetry(f"invalid arguments: {problem}")

    return validate


def _order_desk(model: Model) -> Tool[ThreadDeps]:
    """The sub-agent on the same model (offline: its own offline model)."""
    inner = orders_offline_model() if isinstance(model, FunctionModel) else model
    return delegate(
        build_orders(inner),
        name=ORDER_DESK,
        description="Hand a request about an order (e.g. cancelling one) to the order desk.",
    )


def build_assistant(model: Model) -> Agent[ThreadDeps, str]:
    """The assistant on `model` (the worker's `LLM_MODEL`, or the offline demo model)."""
    return Agent(
        model,
        name="assistant",
        deps_type=ThreadDeps,
        instructions=INSTRUCTIONS,
        tools=[
            _tool(
                SEND_EMAIL,
                send_email,
                ask_person("Approve sendEmail to {to}: {body!r}?", what="the email to {to}"),
            ),
            _tool(
                FILE_QUARTERLY_REPORT,
                file_quarterly_report,
                ask_person(
                    "Please fill in the quarterly report: quarter, year and revenue.",
                    what="the quarterly report",
                    fills_args=True,
                ),
                fills=True,
            ),
            _order_desk(model),
            _tool(
                SUBMIT_EXPENSE,
                submit_expense,
                ask_person(
                    "Approve submitExpense: {amount} {currency} for {description}?",
                    what="the expense ({amount} {currency})",
                ),
            ),
            _tool(
                DELETE_DRAFTS,
                delete_drafts,
                ask_person(
                    "Delete all your email drafts? This cannot be undone.",
                    what="deleting your drafts",
                    confirm=True,
                ),
            ),
        ],
        capabilities=thread_capabilities(),
    )
