"""The client's own tools (`RunAgentInput.tools`) in an agent run: offered to the model,
run by the client, and approved by a person first when they need it.

A call of a client tool ends the run for the client to run it (`_asking.hand_to_client`).
One that needs approval (`register(approve_client_tools=...)`, or `needsApproval: true` on the
client's own tool entry) is deferred for approval first, as TanStack's own server does for a
`.client()` tool with `needsApproval`: pydantic-ai asks (`kind="unapproved"`), the thread makes
it a `tool_call` interrupt, and only an approved call reaches the toolset, which defers it to
the client with the arguments the person approved. A rejected call never does: the model reads
the denial as its result.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from typing import Any, Final

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from pydantic_ai import RunContext
    from pydantic_ai.exceptions import ApprovalRequired, CallDeferred
    from pydantic_ai.messages import ToolCallPart
    from pydantic_ai.tools import ToolDefinition
    from pydantic_ai.toolsets import AbstractToolset, ExternalToolset
    from pydantic_ai.toolsets.abstract import ToolsetTool

    from ag_ui_temporal.workflows.contract import WireDict
    from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord
    from ag_ui_temporal.workflows.thread.state import ThreadState

APPROVED_ARGS_KEY: Final = "ag-ui-temporal:approvedArgs"
"""Where an approved call's deferral carries the arguments the person approved (the model's,
or the edited ones): the call itself keeps the model's."""
HASHED_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
"""The `$schema` TanStack's client hashes a Standard Schema tool's (zod's) input schema with
(`~standard.jsonSchema.input({target: "draft-2020-12"})`), and drops from what it sends."""
NEEDS_APPROVAL: Final = "needsApproval"
"""A client's own mark on a tool entry of `RunAgentInput.tools` (not AG-UI's: TanStack's
`ChatClient` sends none); `true` makes the tool need approval."""


class _ApprovedFirst(ExternalToolset[Any]):
    """Client tools a person approves before the client runs them.

    Their kind is `unapproved`, so pydantic-ai defers each call for approval without calling
    the toolset; an approved call is then called here, and deferred to the client. It runs in
    workflow code and does nothing but raise, so it needs no activity."""

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        tools = await super().get_tools(ctx)
        return {
            name: replace(tool, tool_def=replace(tool.tool_def, kind="unapproved"))
            for name, tool in tools.items()
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        if not ctx.tool_call_approved:
            raise ApprovalRequired()
        raise CallDeferred(metadata={APPROVED_ARGS_KEY: tool_args})


def needing_approval(tools: list[WireDict], registered: Collection[str]) -> set[str]:
    """The client tools of this run that need approval: those the agent names, and those the
    client marked itself."""
    names = {str(tool.get("name")) for tool in tools}
    marked = {str(tool.get("name")) for tool in tools if tool.get(NEEDS_APPROVAL) is True}
    return (names & set(registered)) | marked


def approved_calls(tools: list[WireDict], group: list[InterruptRecord]) -> list[WireDict]:
    """`tools`, and a stand-in for each approved client tool's call whose tool the resuming
    request does not bring (a client that sends no tools, a decision made outside the chat):
    the approved call must still reach the toolset that hands it to the client. Never shown to
    the model: a run that hands a call over ends there."""
    have = {tool.get("name") for tool in tools}
    stand_ins = {
        str(record.data["tool"]): {"name": record.data["tool"], NEEDS_APPROVAL: True}
        for record in group
        if record.handed_to_client and record.data.get("tool") not in have
    }
    return [*tools, *stand_ins.values()]


def awaiting_client(state: ThreadState) -> bool:
    """Whether a call of the agent's last response that a person approved for the client has
    no result yet (the model must not go on without it). Only that response's: an approved
    call the client never answered before the user wrote on does not hold later ones."""
    made = next((m for m in reversed(state.messages) if m.get("toolCalls")), None)
    if made is None:
        return False
    calls = {call.get("id") for call in made["toolCalls"]}
    calls -= {m.get("toolCallId") for m in state.messages if m.get("role") == "tool"}
    handed = {i.interrupt.get("toolCallId") for i in state.interrupts if i.handed_to_client}
    return bool(calls & handed)


def toolsets(
    tools: list[WireDict], own: set[str], approve: set[str]
) -> list[AbstractToolset[Any]] | None:
    """The client's own tools (`RunAgentInput.tools`): the model may call them, the client
    runs them, those in `approve` once a person approved the call. A client that declares one
    of the agent's tools (TanStack AI registers the tools it approves) does not run it: the
    agent's own stays."""
    offered = [tool for tool in tools if tool.get("name") not in own]
    plain = [_definition(tool) for tool in offered if tool.get("name") not in approve]
    approved_first = [_definition(tool) for tool in offered if tool.get("name") in approve]
    found: list[AbstractToolset[Any]] = []
    if plain:
        found.append(ExternalToolset(plain))
    if approved_first:
        found.append(_ApprovedFirst(approved_first))
    return found or None


def as_hashed(parameters: WireDict) -> WireDict:
    """A client tool's parameters as TanStack's client hashes them for its approval binding.

    The client sends its tools' schemas without `$schema`, and hashes a zod (Standard Schema)
    tool's with the 2020-12 dialect: stamped so, the approval's `editedArgs` hashes like the
    tool the client registered, and it shows a `tool-approval` item. A tool declared with raw
    JSON Schema without `$schema` hashes otherwise: its client shows a resolvable `generic`
    item for the same interrupt, which takes the same answers."""
    return parameters if "$schema" in parameters else {"$schema": HASHED_DIALECT, **parameters}


def handed_args(call: ToolCallPart, metadata: dict[str, Any]) -> dict[str, Any]:
    """The arguments the client runs a call with: those a person approved, else the model's."""
    deferral = metadata.get(call.tool_call_id)
    approved = deferral.get(APPROVED_ARGS_KEY) if isinstance(deferral, dict) else None
    return approved if isinstance(approved, dict) else call.args_as_dict()


def _definition(tool: WireDict) -> ToolDefinition:
    return ToolDefinition(
        name=str(tool["name"]),
        description=tool.get("description"),
        parameters_json_schema=tool.get("parameters") or {"type": "object"},
    )
