"""The demo, served where `AGENT_MODULES` names this module (`make run` does): importing it
registers the assistant (on the model `LLM_MODEL` names; unset, the offline demo model) and
the activities its tools run (`sendEmail`, `fileQuarterlyReport`, `deleteDrafts`,
`submitExpense`). Its sub-agent `orders` comes with it (a `delegate` tool runs it).

A deployment serves it only when asked: it is one more module of `AGENT_MODULES`.
"""

from __future__ import annotations

from pydantic_ai.models import Model

from ag_ui_temporal.agents import register, register_activities
from ag_ui_temporal.agents.models import resolve_model
from ag_ui_temporal.demo.activities import demo_tools
from ag_ui_temporal.demo.assistant import build_assistant
from ag_ui_temporal.demo.expenses import expense_activities
from ag_ui_temporal.demo.offline import offline_model
from ag_ui_temporal.settings import Settings, get_settings

DESCRIPTION = (
    "Demo assistant (pydantic-ai; an offline model unless LLM_MODEL is set): emails with "
    "approval, the quarterly report form, expenses, a date picked in the browser."
)


def demo_model(settings: Settings) -> Model:
    """`LLM_MODEL`, or the offline demo model when it is unset."""
    if settings.llm_model:
        return resolve_model(settings)
    return offline_model(settings.offline_model_word_delay)


register(
    build_assistant(demo_model(get_settings())),
    description=DESCRIPTION,
    approve_with_edits=True,
    refusals_end_the_turn=True,
)
register_activities(demo_tools)
register_activities(expense_activities)
