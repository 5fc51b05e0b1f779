"""A Google ADK agent of your own, served in threads at `POST /agents/adk`.

List this module in `AGENT_MODULES` (`make run` does); importing it registers the agent.
docs/agents.md walks through it. The agent has one tool, `sendEmail`, with
`require_confirmation=True`: each call the model makes asks a person first (a `tool_call`
interrupt that expires in two days), and once they approve, the tool sends the email through
the `sendEmail` activity (the demo's, `demo.activities`, registered beside the agent), keyed by
the call's id: the activity records the email in the store's outbox, so it is sent once per
call, whatever Temporal retries and on whichever worker. A rejection's note is what the model
hears.

The tool's body runs in the workflow (ADK's function tools do, under Temporal's integration),
so it does nothing but start the activity. The model is a small offline one that reads its own
sentences (`examples.agents.adk_email_model`); an agent on Gemini names one
(`model="gemini-2.5-flash"`, with `GOOGLE_API_KEY` on the worker).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext
from temporalio import workflow
from temporalio.common import RetryPolicy

from ag_ui_temporal.agents import register_activities
from ag_ui_temporal.agents.adk_agents import register_adk_agent
from ag_ui_temporal.demo.activities import demo_tools
from ag_ui_temporal.demo.tools import SEND_EMAIL
from ag_ui_temporal.examples.agents.adk_email_model import NAME as MODEL
from ag_ui_temporal.workflows.thread.tool_calls import ToolCallInput, ToolCallOutput

NAME = "adk"
APPROVAL_EXPIRES_IN = timedelta(days=2)
SEND_TIMEOUT = timedelta(seconds=30)
SEND_ATTEMPTS = 5


async def sendEmail(to: str, subject: str, body: str, tool_context: ToolContext) -> Any:
    """Send an email."""
    sent = await workflow.execute_activity(
        SEND_EMAIL.name,
        ToolCallInput(
            key=tool_context.function_call_id or "",
            tool=SEND_EMAIL.name,
            args={"to": to, "subject": subject, "body": body},
        ),
        result_type=ToolCallOutput,
        start_to_close_timeout=SEND_TIMEOUT,
        retry_policy=RetryPolicy(maximum_attempts=SEND_ATTEMPTS),
    )
    return sent.result


AGENT = LlmAgent(
    name="email_assistant",
    instruction="You send emails for the user, with the sendEmail tool.",
    model=MODEL,
    tools=[FunctionTool(sendEmail, require_confirmation=True)],
)

register_adk_agent(
    AGENT,
    name=NAME,
    description="Google ADK example: sends emails, each one approved by a person first.",
    approval_expires_in=APPROVAL_EXPIRES_IN,
    approval_messages={SEND_EMAIL.name: "Send an email to {to}?"},
)
# the demo's tools, whose `sendEmail` the agent sends through (a worker serving both runs
# them once)
register_activities(demo_tools)
