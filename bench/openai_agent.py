"""The OpenAI Agents SDK comparison (`bench.sdk_peers`, the `openai` phase): the example
of `make run` (`examples.agents.openai_email`: `sendEmail` with `needs_approval`) served here,
against the same agent on the SDK's own loop in one process, its paused `RunState` kept in
memory: what a team runs without us, and loses with the process.

Ours: this module, in `AGENT_MODULES`, registers the example again with its offline model
answering at once (`word_delay=0`, as the bench's other agents do); the thread runs it
through `temporalio-openai-agents` (each model call an activity) and sends through the
worker's `sendEmail` activity. The peer (`python -m bench.openai_agent PORT DB`): one uvicorn
process on uvloop + httptools serving AG-UI at `/agent` with `Runner.run`, its `sendEmail`
the same activity code run in its process on an outbox of its own (SQLite), once per call id.
It streams nothing while the model speaks (its events come when a `Runner.run` ends): the
cheapest host the SDK allows.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents import RunConfig, Runner, RunState

from ag_ui_temporal.agents.openai_agents import register_openai_agent
from ag_ui_temporal.demo.activities import ToolActivities
from ag_ui_temporal.demo.tools import SEND_EMAIL
from ag_ui_temporal.examples.agents import openai_email
from ag_ui_temporal.examples.agents.openai_email_model import EmailModels
from ag_ui_temporal.workflows.thread.tool_calls import ToolCallInput

if TYPE_CHECKING:
    from fastapi import FastAPI

NAME = openai_email.NAME
QUIET = RunConfig(tracing_disabled=True)

register_openai_agent(
    openai_email.AGENT,
    name=NAME,
    run_config=QUIET,
    approval_expires_in=openai_email.APPROVAL_EXPIRES_IN,
    approval_messages={SEND_EMAIL.name: "Send an email to {to}?"},
    model_provider=EmailModels(),
    replace=True,
)


def build_app(db: str) -> FastAPI:
    from fastapi import FastAPI

    from bench.graph_agent import peer_outbox
    from bench.sdk_peers import agent_route

    holder: dict[str, Any] = {}
    paused: dict[str, RunState[Any]] = {}
    said: dict[str, list[Any]] = {}
    config = dataclasses.replace(QUIET, model_provider=EmailModels())

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        tools = ToolActivities(await peer_outbox(Path(db)))

        async def send(context: Any, arguments: str) -> str:  # the activity's code, in process
            call = ToolCallInput(
                key=context.tool_call_id, tool=SEND_EMAIL.name, args=json.loads(arguments)
            )
            return json.dumps((await tools.send_email(call)).result)

        send_tool = dataclasses.replace(openai_email.SEND, on_invoke_tool=send)
        holder["agent"] = openai_email.AGENT.clone(tools=[send_tool])
        yield

    app = FastAPI(lifespan=lifespan)

    @app.get("/ready")
    async def ready() -> dict[str, bool]:
        return {"ready": "agent" in holder}

    async def go_on(thread: str, body: dict[str, Any]) -> Any:
        """The thread's next `Runner.run`: its paused state answered, or its next message."""
        if body.get("resume"):
            state = paused.pop(thread)
            approved = body["resume"][0].get("payload", {}).get("approved")
            for item in state.get_interruptions():
                if approved:
                    state.approve(item)
                else:
                    state.reject(item, rejection_message="you rejected it")
            return await Runner.run(holder["agent"], state, run_config=config)
        text = body["messages"][-1]["content"]
        items = [*said.get(thread, []), {"role": "user", "content": text}]
        return await Runner.run(holder["agent"], items, run_config=config)

    async def answer(thread: str, body: dict[str, Any]) -> tuple[str, list[str]]:
        result = await go_on(thread, body)
        if not result.interruptions:
            said[thread] = result.to_input_list()
            return str(result.final_output or ""), []
        paused[thread] = result.to_state()
        return "", [f"int-{uuid.uuid4().hex[:12]}" for _ in result.interruptions]

    agent_route(app, answer)
    return app


if __name__ == "__main__":
    from bench.peer import serve_tuned

    serve_tuned(build_app(sys.argv[2]), int(sys.argv[1]))
