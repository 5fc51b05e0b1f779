"""LangGraph agents of the tests' own built with LangGraph's other APIs
(`tests/agents/test_langgraph_apis.py`), both on one scripted chat model and one tool:

- `notes-functional`: an `@entrypoint` (the functional API) whose `@task`s call the model, ask
  about each tool call (`ask_tool_call`, in an activity) and run the approved ones; "color"
  makes it ask in its own body (`interrupt()`, workflow code); it remembers the conversation
  as `previous`.
- `notes-toolnode`: a `StateGraph` whose tools run in LangGraph's prebuilt `ToolNode` (an
  activity) behind an approval node (workflow code) that asks about each call and sends the
  approved ones, with their edits, to the `ToolNode`; the rejected ones get a `ToolMessage`.

The model, asked "note a b", calls `add_note` once per word; after the tools it says what they
returned; otherwise it counts the user's messages it was given.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, cast

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.func import entrypoint, task
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, Send, interrupt

from ag_ui_temporal.agents.graphs import ask_tool_call, register_graph

FUNCTIONAL = "notes-functional"
TOOL_NODE = "notes-toolnode"
COLOR = {"type": "string", "enum": ["red", "blue"]}

RAN: list[tuple[str, str]] = []
"""`(tool call id, text)` each time `add_note` ran (the tests' worker runs in their process)."""


@tool
def add_note(text: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Add a note."""
    RAN.append((tool_call_id, text))
    return f"noted {text}"


class Scripted(BaseChatModel):
    """A chat model that reads its own sentences (see the module's docstring)."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=_reply(messages))])


def _reply(messages: list[BaseMessage]) -> AIMessage:
    last = messages[-1]
    if isinstance(last, HumanMessage) and str(last.text).startswith("note "):
        calls = [
            ToolCall(name="add_note", args={"text": word}, id=f"call_{uuid.uuid4().hex[:12]}")
            for word in str(last.text).split()[1:]
        ]
        return AIMessage(content="", tool_calls=calls)
    if isinstance(last, ToolMessage):
        results = []
        for message in reversed(messages):
            if not isinstance(message, ToolMessage):
                break
            results.append(str(message.text))
        return AIMessage(content="Done: " + "; ".join(sorted(results)) + ".")
    said = sum(isinstance(m, HumanMessage) for m in messages)
    return AIMessage(content=f"You said {said} things.")


MODEL = Scripted()


# -- the functional API ------------------------------------------------------------------------


@task
async def call_model(messages: list[BaseMessage]) -> AIMessage:
    return await MODEL.ainvoke(messages)


@task
def review(call: ToolCall) -> ToolCall | ToolMessage:
    """Ask about one call: the call to run (with the person's edits), or why it does not."""
    decision = ask_tool_call(call, message="Note {text}?", tool=add_note)
    if decision.approved:
        return {**call, "args": decision.args}
    return ToolMessage(decision.why_not, tool_call_id=call["id"], status="error")


@task
async def run_tool(call: ToolCall) -> ToolMessage:
    result: ToolMessage = await add_note.ainvoke({**call, "type": "tool_call"})
    return result


def _added(left: list[BaseMessage], right: list[BaseMessage]) -> list[BaseMessage]:
    return cast(list[BaseMessage], add_messages(cast(Any, left), cast(Any, right)))


@entrypoint()
async def notes(
    messages: list[BaseMessage], *, previous: list[BaseMessage] | None = None
) -> entrypoint.final[AIMessage | str, list[BaseMessage]]:
    conversation = _added(previous or [], messages)
    if str(conversation[-1].text) == "color":
        color = interrupt("Which color?", response_schema=COLOR)
        reply = AIMessage(content=f"You chose {color}.")
        return entrypoint.final(value=str(reply.text), save=_added(conversation, [reply]))
    reply = await call_model(conversation)
    while reply.tool_calls:
        results: list[BaseMessage] = []
        for call in reply.tool_calls:  # one question at a time: each answer, then the next
            reviewed = await review(call)
            if not isinstance(reviewed, ToolMessage):
                reviewed = await run_tool(reviewed)
            results.append(reviewed)
        conversation = _added(conversation, [reply, *results])
        reply = await call_model(conversation)
    return entrypoint.final(value=reply, save=_added(conversation, [reply]))


register_graph(
    notes,
    name=FUNCTIONAL,
    description="The tests' @entrypoint.",
    tasks=[call_model, review, run_tool],
)


# -- a ToolNode behind an approval node ------------------------------------------------------


async def model_node(state: MessagesState) -> dict[str, Any]:
    return {"messages": [await MODEL.ainvoke(state["messages"])]}


def to_review(state: MessagesState) -> str:
    calls = getattr(state["messages"][-1], "tool_calls", None)
    return "review" if calls else END


def review_node(state: MessagesState) -> Command[Any]:
    """Ask about each call of the model's last message; the approved ones, with their edits,
    go to the `ToolNode` (a list of tool calls is what it runs); the rejected ones are
    answered here."""
    last = state["messages"][-1]
    approved, rejected = [], []
    for call in last.tool_calls if isinstance(last, AIMessage) else []:
        decision = ask_tool_call(call, message="Note {text}?", tool=add_note)
        if decision.approved:
            approved.append({**call, "args": decision.args})
        else:
            why = decision.why_not
            rejected.append(ToolMessage(why, tool_call_id=call["id"], status="error"))
    return Command(
        update={"messages": rejected}, goto=[Send("tools", approved)] if approved else "model"
    )


def build_tool_node_graph() -> StateGraph[Any, Any, Any, Any]:
    graph: StateGraph[Any, Any, Any, Any] = StateGraph(MessagesState)
    graph.add_node("model", model_node, metadata={"execute_in": "activity"})
    graph.add_node(
        "review", review_node, metadata={"execute_in": "workflow"}, destinations=("tools", "model")
    )
    graph.add_node("tools", ToolNode([add_note]), metadata={"execute_in": "activity"})
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", to_review, ["review", END])
    graph.add_edge("tools", "model")
    return graph


register_graph(
    build_tool_node_graph(), name=TOOL_NODE, description="The tests' ToolNode behind approvals."
)
