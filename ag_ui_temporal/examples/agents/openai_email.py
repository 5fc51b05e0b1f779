"""An OpenAI Agents SDK agent of your own, served in threads at `POST /agents/openai`.

List this module in `AGENT_MODULES` (`make run` does); importing it registers the agent.
docs/agents.md walks through it. The agent has one tool, `sendEmail`, with
`needs_approval=True`: each call the model makes asks a person first (a `tool_call`
interrupt that expires in two days), and once they approve, the tool sends the email through
the `sendEmail` activity (the demo's, `demo.activities`, registered beside the agent),
keyed by the call's id: the activity records the email in the store's outbox, so it is sent
once per call, whatever Temporal retries and on whichever worker. A rejection is what the model
hears ("you rejected it").

The tool's body runs in the workflow (a `function_tool` does, under Temporal's runner), so it
does nothing but start the activity. The model is a small offline one that reads its own
sentences (`examples.agents.openai_email_model`); an agent on OpenAI's models drops
`model_provider` and names one (`model="gpt-5-mini"`, with `OPENAI_API_KEY` on the worker).
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from agents import Agent, FunctionTool, RunConfig
from temporalio import workflow
from temporalio.common import RetryPolicy

from ag_ui_temporal.agents import register_activities
from ag_ui_temporal.agents.openai_agents import register_openai_agent
from ag_ui_temporal.demo.activities import demo_tools
from ag_ui_temporal.demo.tools import SEND_EMAIL
from ag_ui_temporal.examples.agents.openai_email_model import NAME as MODEL
from ag_ui_temporal.examples.agents.openai_email_model import EmailModels
from ag_ui_temporal.workflows.thread.tool_calls import ToolCallInput, ToolCallOutput

NAME = "openai"
APPROVAL_EXPIRES_IN = timedelta(days=2)
SEND_TIMEOUT = timedelta(seconds=30)
SEND_ATTEMPTS = 5


async def send_email(context: Any, arguments: str) -> str:
    """The approved call, in the workflow: the `sendEmail` activity, keyed by the call's id."""
    sent = await workflow.execute_activity(
        SEND_EMAIL.name,
        ToolCallInput(key=context.tool_call_id, tool=SEND_EMAIL.name, args=json.loads(arguments)),
        result_type=ToolCallOutput,
        start_to_close_timeout=SEND_TIMEOUT,
        retry_policy=RetryPolicy(maximum_attempts=SEND_ATTEMPTS),
    )
    return json.dumps(sent.result)


SEND = FunctionTool(
    name=SEND_EMAIL.name,
    description=SEND_EMAIL.description,
    params_json_schema={k: v for k, v in SEND_EMAIL.parameters.items() if k != "$schema"},
    on_invoke_tool=send_email,
    strict_json_schema=False,  # `format: email` is no strict-mode keyword
    needs_approval=True,
)

AGENT: Agent[Any] = Agent(
    name="Email assistant",
    instructions="You send emails for the user, with the sendEmail tool.",
    model=MODEL,
    tools=[SEND],
)

register_openai_agent(
    AGENT,
    name=NAME,
    description="OpenAI Agents SDK example: sends emails, each one approved by a person first.",
    run_config=RunConfig(tracing_disabled=True),  # offline: no traces to OpenAI's platform
    approval_expires_in=APPROVAL_EXPIRES_IN,
    approval_messages={SEND_EMAIL.name: "Send an email to {to}?"},
    model_provider=EmailModels(word_delay=0.05),
)
# the demo's tools, whose `sendEmail` the agent sends through (a worker serving both runs
# them once)
register_activities(demo_tools)
