"""A LangGraph node's activity, as the thread needs it: its input as LangChain messages again,
and the tokens of the chat model it calls streamed to the thread while they come.

`GraphNodes` is a worker interceptor around the activities of registered graphs' nodes
(`agents.graphs`). The plugin hands a node its state through Temporal's JSON converter, which
turns LangChain messages into dicts: `as_messages` makes them messages again, as the node
would see them in LangGraph itself. In a thread's node, the first chat-model call's tokens
(LangChain's `on_llm_new_token`, installed with a configure hook so that every model call in
the node reports to it) are published to the thread as `StreamDelta`s on the thread's stream
signal, batched as pydantic-ai's deltas are (`agents.streaming`): the thread shows them
with the same writer, and the node's result completes what was shown.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, Final
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AnyMessage
from langchain_core.outputs import ChatGenerationChunk, GenerationChunk
from langchain_core.tracers.context import register_configure_hook
from pydantic import TypeAdapter, ValidationError
from temporalio import activity
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

from ag_ui_temporal.agents.registry import all_registered_graphs
from ag_ui_temporal.agents.streaming import StreamDelta, thread_topic
from ag_ui_temporal.workflows.contract import THREAD_WORKFLOW

_MESSAGE: TypeAdapter[Any] = TypeAdapter(AnyMessage)
_MESSAGE_TYPES: Final = frozenset(
    {"human", "ai", "tool", "system", "function", "chat", "remove"}
    | {f"{kind}MessageChunk" for kind in ("AI", "Human", "System", "Tool", "Function", "Chat")}
)
"""The `type` of LangChain's messages (`AnyMessage`'s discriminator)."""


def as_messages(value: Any) -> Any:
    """`value` with every dict that is a serialized LangChain message a message again."""
    if isinstance(value, dict):
        if value.get("type") in _MESSAGE_TYPES and "content" in value:
            try:
                return _MESSAGE.validate_python(value)
            except ValidationError:
                return value  # a dict of the user's own that only looks like a message
        return {key: as_messages(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_messages(item) for item in value]
    if isinstance(value, tuple):
        return tuple(as_messages(item) for item in value)
    return value


class _Tokens(BaseCallbackHandler):
    """LangChain's callback for one node attempt: its first model call's deltas to the thread.

    A `_StreamingCallbackHandler` (the two `tap_output_*`): with it, chat models stream (as
    under LangGraph's `stream_mode="messages"`), so the tokens exist to be shown."""

    run_inline = True  # called in the model's own thread: `publish` is marshalled to the loop

    def __init__(self, publish: Callable[[StreamDelta], None], loop: asyncio.AbstractEventLoop):
        self.publish = publish
        self.loop = loop
        self.run: UUID | None = None
        self.tool_parts: dict[tuple[str, Any], int] = {}
        """The tool calls in the order they began, by their chunks' `index` (their id when
        they have none): a provider's index may count other content too (Anthropic's counts
        content blocks, the text before a call among them), the node's result does not."""

    def tap_output_aiter(self, run_id: UUID, output: Any) -> Any:
        return output

    def tap_output_iter(self, run_id: UUID, output: Any) -> Any:
        return output

    def on_llm_new_token(
        self,
        token: str | list[str | dict[str, Any]],
        *,
        chunk: GenerationChunk | ChatGenerationChunk | None = None,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        self.run = self.run or run_id
        if run_id != self.run:
            return  # a later call in the same node: shown whole when the node ends
        if token and isinstance(token, str):  # content blocks: the node's result has them
            self._publish(StreamDelta(part=0, kind="text", delta=token))
        message = chunk.message if isinstance(chunk, ChatGenerationChunk) else None
        for call in getattr(message, "tool_call_chunks", None) or []:
            self._publish(self._tool_delta(call))

    def _tool_delta(self, call: Any) -> StreamDelta:
        """A piece of a tool call: part 1 + the call's place among the response's calls (the
        text is part 0; the thread's writer pairs the parts with the node's AI message, whose
        calls come in the order they began)."""
        index = call.get("index")
        key = ("index", index) if index is not None else ("id", call.get("id"))
        return StreamDelta(
            part=1 + self.tool_parts.setdefault(key, len(self.tool_parts)),
            kind="tool",
            delta=call.get("args") or "",
            tool_call_id=call.get("id"),
            tool_name=call.get("name"),
        )

    def _publish(self, delta: StreamDelta) -> None:
        try:
            same_loop = asyncio.get_running_loop() is self.loop
        except RuntimeError:
            same_loop = False
        if same_loop:
            self.publish(delta)
        else:  # a sync node runs in a thread of its own (`asyncio.to_thread`)
            self.loop.call_soon_threadsafe(self.publish, delta)


_tokens: ContextVar[_Tokens | None] = ContextVar("agui_graph_tokens", default=None)
register_configure_hook(_tokens, inheritable=True)


class GraphNodes(Interceptor):
    """The worker's interceptor for the activities of registered graphs' nodes."""

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _NodeActivity(next)


class _NodeActivity(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        info = activity.info()
        if not any(info.activity_type in g.activities for g in all_registered_graphs().values()):
            return await self.next.execute_activity(input)
        for node_input in input.args:  # the plugin's `ActivityInput`: args, kwargs, config
            if hasattr(node_input, "args") and hasattr(node_input, "kwargs"):
                node_input.args = as_messages(node_input.args)
                node_input.kwargs = as_messages(node_input.kwargs)
        if info.workflow_type != THREAD_WORKFLOW or info.workflow_id is None:
            return await self.next.execute_activity(input)
        async with thread_topic() as publish:  # the rest is in the node's result
            token = _tokens.set(_Tokens(publish, asyncio.get_running_loop()))
            try:
                return await self.next.execute_activity(input)
            finally:
                _tokens.reset(token)
