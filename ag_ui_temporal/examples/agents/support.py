"""A support agent of your own, served in threads at `POST /agents/support`.

List this module in `AGENT_MODULES` for the worker and the gateway, e.g.
`AGENT_MODULES='["ag_ui_temporal.examples.agents.support"]' make run`;
importing it registers the agent.
docs/agents.md walks through it. Its tools show the two ways an agent asks a person:

- `refund`: a refund above `AUTO_REFUND_LIMIT` needs a person's approval (a `tool_call`
  interrupt; they may edit the amount first); smaller ones go through on their own. The
  effect happens once per tool call id, whatever Temporal retries.
- `order_status`: the warehouse (a person) answers (an `input_required` interrupt whose
  form is `STATUS_SCHEMA`); their answer is the tool's result.

The model is `LLM_MODEL`'s; unset, a small offline model that reads this agent's own
sentences (`examples.agents.support_model`), so it runs with no key and no network.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from pydantic_ai import Agent, ApprovalRequired, CallDeferred, RunContext
from pydantic_ai.models import Model

from ag_ui_temporal.agents import ThreadDeps, register, thread_capabilities
from ag_ui_temporal.agents.models import resolve_model
from ag_ui_temporal.agents.thread import ask_person
from ag_ui_temporal.examples.agents.support_model import support_offline_model
from ag_ui_temporal.settings import Settings, get_settings

AUTO_REFUND_LIMIT = 50.0
"""Refunds up to this amount (EUR) need nobody's approval."""
STATUS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["processing", "shipped", "delivered", "lost"]},
        "note": {"type": "string", "maxLength": 500},
    },
    "required": ["status"],
    "additionalProperties": False,
}
"""What the warehouse answers about an order (the `input_required` form's schema)."""
INSTRUCTIONS = (
    "You are the support agent of an online shop. You can refund an order (a person "
    f"approves refunds above {AUTO_REFUND_LIMIT:g} EUR) and ask the warehouse for an "
    "order's status. Tell the customer plainly what happened."
)


@dataclass(frozen=True)
class Refund:
    refund_id: str
    order_id: str
    amount: float
    approved_by: str | None


REFUNDS: dict[str, Refund] = {}
"""Stands in for your billing system: refunds by tool call id. A real tool passes
`ctx.tool_call_id` to the system as its idempotency key (docs/tools.md)."""


def support_model(settings: Settings) -> Model:
    """`LLM_MODEL`'s model, or the offline one when it is unset."""
    return resolve_model(settings) if settings.llm_model else support_offline_model()


support = Agent(
    support_model(get_settings()),
    name="support",
    deps_type=ThreadDeps,
    instructions=INSTRUCTIONS,
    capabilities=thread_capabilities(),
)


@support.tool(
    metadata=ask_person(
        "Refund {amount} EUR on order {order_id}?",
        what="the refund of {amount} EUR on order {order_id}",
    )
)
async def refund(ctx: RunContext[ThreadDeps], order_id: str, amount: float) -> dict[str, Any]:
    """Refund `amount` EUR on order `order_id`."""
    if amount > AUTO_REFUND_LIMIT and not ctx.tool_call_approved:
        raise ApprovalRequired()  # the thread asks a person; approved, this runs again
    key = ctx.tool_call_id or ""  # runs in an activity: a retry must not refund twice
    done = REFUNDS.setdefault(
        key,
        Refund(
            refund_id=f"rf-{len(REFUNDS) + 1}",
            order_id=order_id,
            amount=amount,
            approved_by=ctx.deps.principal if ctx.tool_call_approved else None,
        ),
    )
    return asdict(done)


@support.tool_plain(
    metadata=ask_person(
        "Warehouse: what is the status of order {order_id}?",
        what="the status of order {order_id}",
    )
)
async def order_status(order_id: str) -> dict[str, Any]:
    """Ask the warehouse for the status of order `order_id`."""
    raise CallDeferred(metadata={"responseSchema": STATUS_SCHEMA})


register(
    support,
    description="Support: refunds (a person approves large ones), order status from the warehouse.",
    approve_with_edits=True,
)
