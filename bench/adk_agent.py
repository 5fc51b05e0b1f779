"""The Google ADK comparison (`bench.sdk_peers`, the `adk` phase): the example of
`make run` (`examples.agents.adk_email`: `sendEmail` with `require_confirmation`) served here,
against the same agent on ADK's own `Runner` in one process, its sessions in ADK's own SQLite
session service: what a team runs without us (`adk api_server --session_service_uri
sqlite://...` keeps its sessions so), whose paused runs outlive a restart but not a deadline.

Ours: this module, in `AGENT_MODULES`, registers the example again on its offline model
answering at once (`INSTANT`, as the bench's other agents do); the thread runs it through
`temporalio-google-adk` (each model call an activity) and sends through the worker's
`sendEmail` activity. The peer (`python -m bench.adk_agent PORT DB`): one uvicorn process on
uvloop + httptools serving AG-UI at `/agent` with `Runner.run_async`, each interrupt's id the
ADK confirmation request it answers (nothing kept beside the session), its `sendEmail` the
same activity code run in its process on an outbox of its own (SQLite), once per call id. It
streams nothing while the model speaks (its events come when a run ends): the cheapest host
ADK allows.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from google.adk.models import LLMRegistry
from google.adk.runners import Runner
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from temporalio.google_adk import hitl_confirmation_response, pending_hitl_requests

from ag_ui_temporal.agents.adk_agents import register_adk_agent
from ag_ui_temporal.demo.activities import ToolActivities
from ag_ui_temporal.demo.tools import SEND_EMAIL
from ag_ui_temporal.examples.agents import adk_email
from ag_ui_temporal.examples.agents.adk_email_model import EmailModel
from ag_ui_temporal.workflows.thread.tool_calls import ToolCallInput

if TYPE_CHECKING:
    from fastapi import FastAPI

NAME = adk_email.NAME
INSTANT = "email-offline-adk-instant"
APP = "bench"
USER = "bench"


class InstantEmailModel(EmailModel):
    """The example's model, its words not paced."""

    word_delay: ClassVar[float] = 0.0

    @classmethod
    def supported_models(cls) -> list[str]:
        return [INSTANT]


LLMRegistry.register(InstantEmailModel)
AGENT = adk_email.AGENT.model_copy(update={"model": INSTANT})

register_adk_agent(
    AGENT,
    name=NAME,
    approval_expires_in=adk_email.APPROVAL_EXPIRES_IN,
    approval_messages={SEND_EMAIL.name: "Send an email to {to}?"},
    replace=True,
)


def build_app(db: str) -> FastAPI:
    from fastapi import FastAPI

    from bench.graph_agent import peer_outbox
    from bench.sdk_peers import agent_route

    holder: dict[str, Runner] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        tools = ToolActivities(await peer_outbox(Path(db)))

        async def sendEmail(to: str, subject: str, body: str, tool_context: ToolContext) -> Any:
            """Send an email."""  # the activity's code, in process
            args = {"to": to, "subject": subject, "body": body}
            call = ToolCallInput(
                key=tool_context.function_call_id or "", tool=SEND_EMAIL.name, args=args
            )
            return (await tools.send_email(call)).result

        agent = AGENT.model_copy(
            update={"tools": [FunctionTool(sendEmail, require_confirmation=True)]}
        )
        # WAL, as the LangGraph peer's checkpointer has it (it stays with the file: ADK opens a
        # connection per call, with SQLite's defaults otherwise)
        with closing(sqlite3.connect(f"{db}.adk-sessions")) as conn:
            conn.execute("PRAGMA journal_mode=wal")
        sessions = SqliteSessionService(f"{db}.adk-sessions")
        holder["runner"] = Runner(app_name=APP, agent=agent, session_service=sessions)
        yield
        await sessions.close()

    app = FastAPI(lifespan=lifespan)

    @app.get("/ready")
    async def ready() -> dict[str, bool]:
        return {"ready": "runner" in holder}

    async def message_of(thread: str, body: dict[str, Any]) -> types.Content:
        """The run's message: the answers to its interrupts (each one's id is the ADK request
        it answers), or the thread's next message, in a session made for a new thread."""
        runner = holder["runner"]
        if body.get("resume"):
            answers = [
                hitl_confirmation_response(
                    answer["interruptId"], confirmed=bool(answer["payload"].get("approved"))
                )
                for answer in body["resume"]
            ]
            return types.Content(role="user", parts=answers)
        sessions = runner.session_service
        if await sessions.get_session(app_name=APP, user_id=USER, session_id=thread) is None:
            await sessions.create_session(app_name=APP, user_id=USER, session_id=thread)
        text = body["messages"][-1]["content"]
        return types.Content(role="user", parts=[types.Part(text=text)])

    async def answer(thread: str, body: dict[str, Any]) -> tuple[str, list[str]]:
        message = await message_of(thread, body)
        asked: list[str] = []
        said: list[str] = []
        async for event in holder["runner"].run_async(
            user_id=USER, session_id=thread, new_message=message
        ):
            asked.extend(request.interrupt_id for request in pending_hitl_requests(event))
            if event.content is not None and event.author != "user":
                said.extend(part.text for part in event.content.parts or () if part.text)
        return " ".join(said), asked

    agent_route(app, answer)
    return app


if __name__ == "__main__":
    from bench.peer import serve_tuned

    serve_tuned(build_app(sys.argv[2]), int(sys.argv[1]))
