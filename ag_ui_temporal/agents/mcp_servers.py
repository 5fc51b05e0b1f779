"""MCP servers as an agent's tools, whose questions to the user (`elicitation/create`)
become `input_required` interrupts of the thread.

An MCP session cannot stay open for the days a person may take to answer, so no call
waits for an answer. Each tool call opens an MCP session of its own (in the call-tool
activity, on any worker) whose elicitation handler answers the server from the answers
the thread already holds for this call (`ctx.tool_call_metadata`). The first question
with no answer yet is refused with an MCP error (the server's tool does not go on) and
the call raises `ApprovalRequired` carrying the question: the thread asks the person
(`workflows.thread.agents._elicitation`), and once they answer it approves the call with every
answer so far, so the call runs again, a new session answers the server, and so on
until the tool returns. A server therefore hears each question once more per later
question; a tool should ask before it acts (servers built on MCP's input-required
rounds, `Resolve(...)` in the `mcp` SDK, run their tool body once, after all answers).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from fastmcp.client.elicitation import ElicitResult
from fastmcp.client.transports import ClientTransport
from mcp_types import ElicitRequestFormParams
from pydantic_ai.exceptions import ApprovalRequired
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import ToolsetTool

from ag_ui_temporal.agents.thread import ANSWERS_KEY, ASK_KEY, ELICITATION_KEY

ASK_LATER: Final = "the user answers in their thread; the tool is called again then"
"""The MCP error a question with no answer yet gets (the server's tool stops there)."""

Server = str | Path | Callable[[], ClientTransport]
"""An MCP server: a URL (streamable HTTP), a script's `Path` (stdio), or a function that
makes a new FastMCP transport (each call has a session of its own)."""


class _AskLater(Exception):
    """Raised in the elicitation handler; FastMCP hands the server an MCP error."""


@dataclass
class _Answers:
    """One call's elicitations: the answers the person gave, and the question they still owe."""

    given: list[dict[str, Any]]
    used: set[int] = field(default_factory=set)
    question: dict[str, Any] | None = None

    async def handle(
        self, message: str, response_type: Any, params: Any, context: Any
    ) -> ElicitResult[Any]:
        if not isinstance(params, ElicitRequestFormParams):
            # a URL elicitation sends the person elsewhere: no interrupt can carry it
            return ElicitResult(action="decline")
        asked = {"message": message, "requestedSchema": params.requested_schema}
        for index, answer in enumerate(self.given):
            # matched by the question, not the order: a server may ask several at once
            if index not in self.used and _same(answer, asked):
                self.used.add(index)
                return ElicitResult(action=answer["action"], content=answer.get("content"))
        if self.question is None:
            self.question = asked
        raise _AskLater(ASK_LATER)


def _same(answer: dict[str, Any], asked: dict[str, Any]) -> bool:
    return bool(
        answer.get("message") == asked["message"]
        and answer.get("requestedSchema") == asked["requestedSchema"]
    )


def _given(ctx: RunContext[Any]) -> list[dict[str, Any]]:
    metadata = ctx.tool_call_metadata if ctx.tool_call_approved else None
    answers = metadata.get(ANSWERS_KEY) if isinstance(metadata, dict) else None
    return [answer for answer in answers or [] if isinstance(answer, dict)]


class ThreadMCPToolset(MCPToolset[Any]):
    """An `MCPToolset` whose server's questions are asked in the thread (see the module)."""

    def __init__(self, server: Server, *, id: str, **options: Any) -> None:
        if "elicitation_handler" in options:
            raise ValueError("the thread answers the server's questions: no elicitation_handler")
        self._server = server
        self._options = options
        super().__init__(_transport(server), id=id, **options)

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        answers = _Answers(_given(ctx))
        session = MCPToolset[Any](_transport(self._server), id=self.id, **self._options)
        # on the client, not `elicitation_handler=`: pydantic-ai would warn that a modern
        # session never calls it, yet FastMCP does (MCP's input-required rounds)
        session.client.set_elicitation_callback(answers.handle)
        try:
            result = await session.call_tool(name, tool_args, ctx, tool)
        except Exception:
            if answers.question is None:
                raise
        finally:
            # a stdio server's process ends with its call
            await session.client.close()  # type: ignore[no-untyped-call]
        if answers.question is None:
            return result
        question = {**answers.question, "server": self.id, "answers": answers.given}
        raise ApprovalRequired(metadata={ASK_KEY: {ELICITATION_KEY: question}})


def _transport(server: Server) -> Any:
    return server() if callable(server) else server


def mcp_server(server: Server, *, id: str, **options: Any) -> ThreadMCPToolset:
    """An MCP server's tools for an agent served in threads: `Agent(...,
    toolsets=[mcp_server("http://127.0.0.1:8765/mcp", id="booking")])`.

    `id` names the server's Temporal activities: keep it stable across deploys. When the
    server asks the user for input, the thread opens an `input_required` interrupt with
    the server's message and schema; the answer goes back to the server (docs/agents.md,
    "MCP servers and elicitation"). `options` are `MCPToolset`'s (`headers`, `auth`, ...)."""
    return ThreadMCPToolset(server, id=id, **options)
