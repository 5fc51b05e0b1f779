"""TanStack-native tool approvals (#10).

A `tool_call` interrupt announces TanStack AI's approval envelope as its
`responseSchema` and carries a `tool-approval` binding, so a client that
registered the same tool (`examples/tools/`) with `needsApproval: true` shows a
`tool-approval` item, and any other client a resolvable `generic` item.
Checked against the real `@tanstack/ai` / `@tanstack/ai-client` (tests/node).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from typing import Any

import httpx
import pytest
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from gateway.binding import (
    BINDING_METADATA_KEY,
    ApprovalEnvelope,
    approval_schema_hash,
    bind_interrupt,
    canonical_interrupt_json,
    digest_interrupt_json,
    generic_binding,
    hash_schema_input,
    interrupt_json_hash,
    read_approval_response_schema,
    tool_approval_binding,
)
from tests.agui import STREAMS, cancel, interrupts, resolve, run, thread_state
from tests.node_clients import requires_node, run_node
from workflows._schema import payload_problem, schema_problem
from workflows.activities import Outbox
from workflows.agents.assistant import TANSTACK_APPROVALS_PATCH
from workflows.contract import thread_workflow_id
from workflows.thread import ThreadWorkflow
from workflows.tools import (
    JSON_SCHEMA_DIALECT,
    SEND_EMAIL,
    TOOL_CALL_METADATA_KEY,
    TOOLS,
    ApprovalPayloads,
    ToolSpec,
    approval_response_schema,
    approval_schema,
)

EMAIL = "Send an email to ada@example.com saying hi"
EMAILS = "Send emails to ada@example.com, bob@example.com and cy@example.com"
ADA = {"to": "ada@example.com", "subject": "Message from your assistant", "body": "hi"}
EDITED = {"to": "grace@example.com", "subject": "Hello", "body": "hi from Grace's assistant"}

# Test-only tools with approval payloads; tests/node/tool_approval_lib.mjs
# defines the same tools in zod (fixtures archiveThread and tagThread).
ARCHIVE_THREAD = ToolSpec(
    name="archiveThread",
    description="Archive a thread.",
    parameters={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "properties": {"threadId": {"type": "string"}},
        "required": ["threadId"],
        "additionalProperties": False,
    },
    human="approval",
    approval_payloads=ApprovalPayloads(
        reject={
            "$schema": JSON_SCHEMA_DIALECT,
            "type": "object",
            "properties": {"reason": {"type": "string"}},
            "required": ["reason"],
            "additionalProperties": False,
        }
    ),
)
_NOTE = {
    "$schema": JSON_SCHEMA_DIALECT,
    "type": "object",
    "properties": {"note": {"type": "string"}},
    "required": ["note"],
    "additionalProperties": False,
}
TAG_THREAD = ToolSpec(
    name="tagThread",
    description="Tag a thread.",
    parameters={
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "properties": {"tag": {"type": "string"}},
        "required": ["tag"],
        "additionalProperties": False,
    },
    human="approval",
    approval_payloads=ApprovalPayloads(approve=_NOTE, reject=_NOTE),
)
FIXTURES = {"archiveThread": ARCHIVE_THREAD, "tagThread": TAG_THREAD}


def tool_call_interrupt(
    tool: ToolSpec = SEND_EMAIL, args: Any = None, **fields: Any
) -> dict[str, Any]:
    """A `tool_call` interrupt as the assistant opens it (before the gateway binds it)."""
    interrupt: dict[str, Any] = {
        "id": f"int-{tool.name}",
        "reason": "tool_call",
        "message": f"Approve {tool.name}?",
        "toolCallId": f"call-{tool.name}",
        "responseSchema": approval_schema(tool),
        "metadata": {
            TOOL_CALL_METADATA_KEY: {"name": tool.name, "arguments": args or ADA},
        },
    }
    interrupt.update(fields)
    return {key: value for key, value in interrupt.items() if value is not None}


def binding_of(interrupt: dict[str, Any]) -> dict[str, Any]:
    return interrupt["metadata"][BINDING_METADATA_KEY]


# --------------------------------------------------------------------------
# The approval envelope: which resume payloads a tool_call interrupt accepts.
# --------------------------------------------------------------------------


def test_send_email_envelope_is_tanstacks() -> None:
    schema = approval_schema(SEND_EMAIL)
    assert schema_problem(schema) is None
    approve, reject = schema["oneOf"]
    assert approve == {
        "type": "object",
        "properties": {"approved": {"const": True}, "editedArgs": SEND_EMAIL.parameters},
        "required": ["approved"],
        "additionalProperties": False,
    }
    assert reject == {
        "type": "object",
        "properties": {"approved": {"const": False}},
        "required": ["approved"],
        "additionalProperties": False,
    }
    assert read_approval_response_schema(schema) == ApprovalEnvelope(
        SEND_EMAIL.parameters, None, None
    )


ACCEPTED = {
    # What TanStack's client sends for a tool-approval item (and a generic one).
    "approve": {"approved": True},
    "reject": {"approved": False},
    # TanStack's approve-with-edits is also AG-UI's: editedArgs replaces the args.
    "approve with edits": {"approved": True, "editedArgs": EDITED},
}
REFUSED = {
    "reject with edits": {"approved": False, "editedArgs": EDITED},
    "edits: not an email": {"approved": True, "editedArgs": {**EDITED, "to": "grace"}},
    "edits: field missing": {"approved": True, "editedArgs": {"to": "a@b.c", "body": "x"}},
    "edits: unknown field": {"approved": True, "editedArgs": {**EDITED, "cc": "x@y.z"}},
    "approved not a boolean": {"approved": "yes"},
    "no decision": {"editedArgs": EDITED},
    "payload the tool does not declare": {"approved": True, "payload": {"note": "x"}},
    "unknown key": {"approved": False, "reason": "no"},
    "bare boolean": True,
    "null": None,
    "empty": {},
}


@pytest.mark.parametrize("payload", ACCEPTED.values(), ids=ACCEPTED)
def test_send_email_envelope_accepts(payload: Any) -> None:
    assert payload_problem(approval_schema(SEND_EMAIL), payload) is None


@pytest.mark.parametrize("payload", REFUSED.values(), ids=REFUSED)
def test_send_email_envelope_refuses(payload: Any) -> None:
    assert payload_problem(approval_schema(SEND_EMAIL), payload) is not None


@pytest.mark.parametrize(
    ("tool", "payload", "accepted"),
    [
        (ARCHIVE_THREAD, {"approved": True}, True),
        (ARCHIVE_THREAD, {"approved": True, "editedArgs": {"threadId": "t-2"}}, True),
        (ARCHIVE_THREAD, {"approved": False, "payload": {"reason": "still open"}}, True),
        (ARCHIVE_THREAD, {"approved": False}, False),
        (ARCHIVE_THREAD, {"approved": False, "payload": {}}, False),
        (ARCHIVE_THREAD, {"approved": True, "payload": {"reason": "x"}}, False),
        (TAG_THREAD, {"approved": True, "payload": {"note": "ok"}}, True),
        (TAG_THREAD, {"approved": False, "payload": {"note": "no"}}, True),
        (
            TAG_THREAD,
            {"approved": True, "editedArgs": {"tag": "x"}, "payload": {"note": "ok"}},
            True,
        ),
        (TAG_THREAD, {"approved": True}, False),
        (TAG_THREAD, {"approved": False}, False),
    ],
)
def test_approval_payloads(tool: ToolSpec, payload: Any, accepted: bool) -> None:
    """A tool that declares approval payloads: a decision carries one exactly when declared."""
    schema = approval_schema(tool)
    assert schema_problem(schema) is None
    assert (payload_problem(schema, payload) is None) is accepted


# --------------------------------------------------------------------------
# Binding: tool-approval for tool_call interrupts, generic for the rest.
# --------------------------------------------------------------------------


def test_tool_call_interrupt_gets_tool_approval_binding() -> None:
    interrupt = tool_call_interrupt()
    original = copy.deepcopy(interrupt)
    bound = bind_interrupt(interrupt, "run-1")
    assert interrupt == original
    assert {k: v for k, v in bound.items() if k != "metadata"} == {
        k: v for k, v in original.items() if k != "metadata"
    }
    assert bound["metadata"][TOOL_CALL_METADATA_KEY] == original["metadata"][TOOL_CALL_METADATA_KEY]
    assert binding_of(bound) == {
        "v": 1,
        "kind": "tool-approval",
        "interruptId": "int-sendEmail",
        "interruptedRunId": "run-1",
        "generation": 0,
        "toolName": "sendEmail",
        "toolCallId": "call-sendEmail",
        "originalArgs": ADA,
        "inputSchemaHash": interrupt_json_hash(SEND_EMAIL.parameters),
        "approvalSchemaHash": interrupt_json_hash({"approve": None, "reject": None}),
        "responseSchemaHash": interrupt_json_hash(interrupt["responseSchema"]),
    }


def test_tool_approval_binding_hashes_payload_branches_and_expiry() -> None:
    binding = tool_approval_binding(
        "i-1",
        "run-1",
        tool_name="archiveThread",
        tool_call_id="call-1",
        original_args={"threadId": "t-1"},
        response_schema=approval_schema(ARCHIVE_THREAD),
        expires_at="2030-01-01T00:00:00.000Z",
    )
    reject = ARCHIVE_THREAD.approval_payloads.reject  # type: ignore[union-attr]
    assert binding["approvalSchemaHash"] == approval_schema_hash(None, reject)
    assert binding["approvalSchemaHash"] == interrupt_json_hash({"approve": None, "reject": reject})
    assert binding["inputSchemaHash"] == hash_schema_input(ARCHIVE_THREAD.parameters)
    assert binding["expiresAt"] == "2030-01-01T00:00:00.000Z"


def test_tool_without_input_schema() -> None:
    """No input schema: no `editedArgs`, and `hashSchemaInput(undefined)`."""
    schema = approval_response_schema(None)
    assert "editedArgs" not in schema["oneOf"][0]["properties"]
    assert read_approval_response_schema(schema) == ApprovalEnvelope(None, None, None)
    assert hash_schema_input(None) == digest_interrupt_json("undefined")
    with pytest.raises(TypeError, match="SchemaInput"):
        hash_schema_input({"description": "no JSON Schema keyword"})


def _without_call(interrupt: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in interrupt.items() if k != "metadata"}


def _old_schema() -> dict[str, Any]:
    """The responseSchema of tool_call interrupts opened before #10 (parked threads)."""
    return {
        "type": "object",
        "properties": {"approved": {"type": "boolean"}, "editedArgs": SEND_EMAIL.parameters},
        "required": ["approved"],
        "additionalProperties": False,
    }


def _tampered_schema() -> dict[str, Any]:
    schema = approval_schema(SEND_EMAIL)
    schema["oneOf"][1]["properties"]["payload"] = {"type": "string"}  # not in `required`
    return schema


GENERIC_CASES = {
    "not a tool_call": tool_call_interrupt(reason="confirmation"),
    "no toolCallId": tool_call_interrupt(toolCallId=None),
    "call not named": _without_call(tool_call_interrupt()),
    "call without arguments": tool_call_interrupt(
        metadata={TOOL_CALL_METADATA_KEY: {"name": "sendEmail"}}
    ),
    "call with an empty name": tool_call_interrupt(
        metadata={TOOL_CALL_METADATA_KEY: {"name": "", "arguments": ADA}}
    ),
    "arguments not JSON": tool_call_interrupt(
        metadata={TOOL_CALL_METADATA_KEY: {"name": "sendEmail", "arguments": float("nan")}}
    ),
    "no responseSchema": tool_call_interrupt(responseSchema=None),
    "pre-#10 responseSchema": tool_call_interrupt(responseSchema=_old_schema()),
    "not TanStack's envelope": tool_call_interrupt(responseSchema=_tampered_schema()),
}


@pytest.mark.parametrize("interrupt", GENERIC_CASES.values(), ids=GENERIC_CASES)
def test_other_interrupts_get_generic_binding(interrupt: dict[str, Any]) -> None:
    bound = bind_interrupt(interrupt, "run-1")
    assert binding_of(bound) == generic_binding(
        interrupt["id"], "run-1", interrupt.get("responseSchema"), None
    )


def test_tool_approval_binding_refuses_other_schemas() -> None:
    with pytest.raises(ValueError, match="tool-approval envelope"):
        tool_approval_binding(
            "i-1",
            "run-1",
            tool_name="sendEmail",
            tool_call_id="call-1",
            original_args=ADA,
            response_schema=_old_schema(),
        )


# --------------------------------------------------------------------------
# The published TypeScript definitions (examples/tools) against the Python tools.
# --------------------------------------------------------------------------


def drift(tool: ToolSpec, published: dict[str, Any]) -> list[str]:
    """How the TypeScript definition differs from the Python tool, as TanStack would see it."""
    payloads = tool.approval_payloads or ApprovalPayloads()
    expected = {
        "name": tool.name,
        "description": tool.description,
        "needsApproval": tool.human == "approval",
        "inputJsonSchema": canonical_interrupt_json(tool.parameters),
        "approvalJsonSchema": canonical_interrupt_json(
            {"approve": payloads.approve, "reject": payloads.reject}
        ),
        "inputSchemaHash": hash_schema_input(tool.parameters),
        "approvalSchemaHash": approval_schema_hash(payloads.approve, payloads.reject),
        "responseSchema": canonical_interrupt_json(approval_schema(tool)),
        "responseSchemaHash": interrupt_json_hash(approval_schema(tool)),
    }
    actual = {
        **published,
        "inputJsonSchema": canonical_interrupt_json(published["inputJsonSchema"]),
        "approvalJsonSchema": canonical_interrupt_json(published["approvalJsonSchema"]),
        "responseSchema": canonical_interrupt_json(published["responseSchema"]),
    }
    return [
        f"{key}: Python {expected[key]!r} != TypeScript {actual[key]!r}"
        for key in expected
        if expected[key] != actual[key]
    ]


@pytest.fixture(scope="module")
async def published() -> dict[str, Any]:
    return await run_node(
        "tool_approval_defs.mjs",
        {"mode": "definitions", "fixtures": ["sendEmailDrifted", *FIXTURES]},
    )


def published_tool(published: dict[str, Any], export: str) -> dict[str, Any]:
    [tool] = [tool for tool in published["tools"] if tool["export"] == export]
    return tool


@requires_node
def test_every_python_tool_is_published(published: dict[str, Any]) -> None:
    exports = {t["export"]: t["name"] for t in published["tools"] if ":" not in t["export"]}
    assert exports == {name: name for name in TOOLS}
    assert published["assistantTools"] == list(TOOLS)


@requires_node
@pytest.mark.parametrize("name", TOOLS)
def test_published_definition_matches_python_tool(published: dict[str, Any], name: str) -> None:
    """The zod JSON Schema is the Python one byte for byte (canonically): equal hashes."""
    assert drift(TOOLS[name], published_tool(published, name)) == []


@requires_node
@pytest.mark.parametrize("name", FIXTURES)
def test_approval_payload_definitions_match(published: dict[str, Any], name: str) -> None:
    """approvalSchema branches hash alike too (zod fixtures vs Python ToolSpecs)."""
    assert drift(FIXTURES[name], published_tool(published, f"fixture:{name}")) == []


def _drifted_copies() -> dict[str, ToolSpec]:
    def edit(change: Any) -> ToolSpec:
        parameters = copy.deepcopy(SEND_EMAIL.parameters)
        change(parameters)
        return dataclasses.replace(SEND_EMAIL, parameters=parameters)

    return {
        "field added": edit(lambda p: p["properties"].update(cc={"type": "string"})),
        "format dropped": edit(lambda p: p["properties"]["to"].pop("format")),
        "required reordered": edit(lambda p: p.update(required=["subject", "to", "body"])),
        "$schema dropped": edit(lambda p: p.pop("$schema")),
        "not closed": edit(lambda p: p.pop("additionalProperties")),
        "description": dataclasses.replace(SEND_EMAIL, description="Send an email."),
        "no approval": dataclasses.replace(SEND_EMAIL, human="input"),
        "approval payload": dataclasses.replace(
            SEND_EMAIL, approval_payloads=ApprovalPayloads(reject=_NOTE)
        ),
    }


@requires_node
@pytest.mark.parametrize("tool", _drifted_copies().values(), ids=_drifted_copies())
def test_python_drift_fails(published: dict[str, Any], tool: ToolSpec) -> None:
    """Any change to the Python tool that the TS definition does not follow is caught."""
    assert drift(tool, published_tool(published, "sendEmail"))


@requires_node
def test_typescript_drift_fails(published: dict[str, Any]) -> None:
    """z.email() instead of the published string+format: zod adds a pattern, hashes differ."""
    problems = drift(SEND_EMAIL, published_tool(published, "fixture:sendEmailDrifted"))
    assert {problem.split(":")[0] for problem in problems} == {
        "inputJsonSchema",
        "inputSchemaHash",
        "responseSchema",
        "responseSchemaHash",
    }


@requires_node
async def test_published_definitions_typecheck() -> None:
    """`tsc --strict` accepts examples/tools, and a front end using them as TanStack's
    guide does (`interrupt.originalArgs.to` typed by the tool), against the real types."""
    result = await run_node("tool_approval_defs.mjs", {"mode": "typecheck"})
    assert result["diagnostics"] == []


# --------------------------------------------------------------------------
# TanStack's InterruptManager reading bound interrupts (no server).
# --------------------------------------------------------------------------


def manager_job(
    interrupt: dict[str, Any], tools: list[str], decisions: Sequence[dict[str, Any]] = ()
) -> dict[str, Any]:
    """Hydrate TanStack's InterruptManager with `interrupt` as the gateway binds it."""
    return {
        "threadId": "t-1",
        "interruptedRunId": "run-1",
        "tools": tools,
        "interrupts": [bind_interrupt(interrupt, "run-1")],
        "decisions": [{"id": interrupt["id"], **decision} for decision in decisions],
    }


CLASSIFIED = {  # tools the client registered -> the kind of item it shows
    "published sendEmail": (["published:sendEmail"], "tool-approval"),
    "published assistantTools": (["published:*"], "tool-approval"),
    "no tools": ([], "generic"),
    "other tool only": (["published:fileQuarterlyReport"], "generic"),
    "sendEmail with another schema": (["fixture:sendEmailDrifted"], "generic"),
    "sendEmail without needsApproval": (["fixture:sendEmailNoApproval"], "generic"),
}
ANSWERED = {  # tool, the app's decision -> what the client submits (None: refused)
    "approve": (ARCHIVE_THREAD, {"approve": True}, {"approved": True}),
    "approve with edits": (
        ARCHIVE_THREAD,
        {"approve": True, "editedArgs": {"threadId": "t-9"}},
        {"approved": True, "editedArgs": {"threadId": "t-9"}},
    ),
    "reject with payload": (
        ARCHIVE_THREAD,
        {"approve": False, "payload": {"reason": "still open"}},
        {"approved": False, "payload": {"reason": "still open"}},
    ),
    "reject without the required payload": (ARCHIVE_THREAD, {"approve": False}, None),
    "approve with an undeclared payload": (
        ARCHIVE_THREAD,
        {"approve": True, "payload": {"reason": "x"}},
        None,
    ),
    "shared schema, approve": (
        TAG_THREAD,
        {"approve": True, "payload": {"note": "ok"}},
        {"approved": True, "payload": {"note": "ok"}},
    ),
    "shared schema, reject": (
        TAG_THREAD,
        {"approve": False, "payload": {"note": "no"}},
        {"approved": False, "payload": {"note": "no"}},
    ),
    "shared schema, no payload": (TAG_THREAD, {"approve": True}, None),
}


def answered_interrupt(tool: ToolSpec) -> dict[str, Any]:
    return tool_call_interrupt(tool, {"threadId": "t-1"} if tool is ARCHIVE_THREAD else None)


@pytest.fixture(scope="module")
async def managed() -> dict[str, dict[str, Any]]:
    """Every InterruptManager case below, run in one Node process."""
    jobs = {f"classified/{key}": manager_job(tool_call_interrupt(), tools)
            for key, (tools, _) in CLASSIFIED.items()}  # fmt: skip
    jobs.update(
        (
            f"answered/{key}",
            manager_job(answered_interrupt(tool), [f"fixture:{tool.name}"], [decision]),
        )
        for key, (tool, decision, _) in ANSWERED.items()
    )
    results = await run_node(
        "tool_approval_defs.mjs", {"mode": "managers", "cases": list(jobs.values())}
    )
    return dict(zip(jobs, results["results"], strict=True))


@requires_node
@pytest.mark.parametrize("key", CLASSIFIED)
def test_client_classifies_tool_approvals(managed: dict[str, Any], key: str) -> None:
    """Same tool with needsApproval: tool-approval; anything else: a resolvable generic item."""
    kind = CLASSIFIED[key][1]
    interrupt = tool_call_interrupt()
    [item] = managed[f"classified/{key}"]["items"]
    assert (item["kind"], item["canResolve"], item["status"]) == (kind, True, "pending")
    assert item["error"] is None
    if kind == "tool-approval":
        assert (item["toolName"], item["toolCallId"]) == ("sendEmail", "call-sendEmail")
        assert item["originalArgs"] == ADA
        assert item["binding"] == binding_of(bind_interrupt(interrupt, "run-1"))
    else:
        assert item["binding"]["kind"] == "generic"
        assert item["binding"]["responseSchemaHash"] == interrupt_json_hash(
            interrupt["responseSchema"]
        )


@requires_node
@pytest.mark.parametrize("key", ANSWERED)
def test_client_approval_payloads_meet_the_server_schema(managed: dict[str, Any], key: str) -> None:
    """What TanStack's client submits for a tool with an approvalSchema passes our schema,
    and what it refuses to submit our schema refuses too."""
    tool, decision, payload = ANSWERED[key]
    interrupt = answered_interrupt(tool)
    result = managed[f"answered/{key}"]
    [item] = result["items"]
    assert item["kind"] == "tool-approval"
    if payload is None:
        assert result["submission"] is None
        [after] = result["after"]
        assert after["error"]["code"] == "invalid-payload"
        refused = {"approved": decision["approve"]}
        if "payload" in decision:
            refused["payload"] = decision["payload"]
        assert payload_problem(interrupt["responseSchema"], refused) is not None
        return
    [resolution] = result["submission"]["resolutions"]
    assert resolution == {"interruptId": interrupt["id"], "status": "resolved", "payload": payload}
    assert payload_problem(interrupt["responseSchema"], payload) is None


# --------------------------------------------------------------------------
# The real ChatClient against the real gateway and Temporal.
# --------------------------------------------------------------------------


async def chat(
    gateway_url: str, thread_id: str, tools: list[str], *steps: dict[str, Any]
) -> list[dict[str, Any]]:
    job = {
        "url": f"{gateway_url}/agents/assistant",
        "threadId": thread_id,
        "tools": tools,
        "steps": list(steps),
    }
    result = await run_node("tool_approval_chat.mjs", job)
    for step in result["steps"]:
        STREAMS.extend(request["events"] for request in step["requests"] if request["events"])
        assert step["stepError"] is None, step["stepError"]
        assert step["error"] is None, step["error"]
        assert step["interruptErrors"] == [], step["interruptErrors"]
    return result["steps"]


def results(step: dict[str, Any]) -> list[str]:
    """toolCallIds of the TOOL_CALL_RESULTs (in resume order: TanStack sorts it by interrupt id)."""
    return [e["toolCallId"] for e in step["events"] if e["type"] == "TOOL_CALL_RESULT"]


def said(step: dict[str, Any]) -> str:
    return "".join(e["delta"] for e in step["events"] if e["type"] == "TEXT_MESSAGE_CONTENT")


def resumed_with(step: dict[str, Any]) -> list[dict[str, Any]]:
    """The `resume` entries of the one continuation request the client sent."""
    [request] = step["requests"]
    return request["body"]["resume"]


def sent_to(outbox: Outbox, tool_call_id: str) -> list[str]:
    return [e["args"]["to"] for e in outbox.effects("sendEmail") if e["key"] == tool_call_id]


def approvals(step: dict[str, Any], count: int) -> list[dict[str, Any]]:
    items = step["interrupts"]
    assert [(i["kind"], i["canResolve"], i["reason"]) for i in items] == [
        ("tool-approval", True, "tool_call")
    ] * count, items
    assert all(i["toolCallId"] == i["wireToolCallId"] for i in items), items
    return items


REGISTERED = ["published:*"]


@requires_node
async def test_registered_tool_approve(gateway_url: str, thread_id: str, outbox: Outbox):
    asked, done = await chat(
        gateway_url,
        thread_id,
        REGISTERED,
        {"send": EMAIL},
        {"decide": [{"index": 0, "approve": True}]},
    )
    [item] = approvals(asked, 1)
    assert item["toolName"] == "sendEmail"
    assert item["originalArgs"] == ADA
    [start] = [e for e in asked["events"] if e["type"] == "TOOL_CALL_START"]
    assert item["toolCallId"] == start["toolCallId"]
    assert resumed_with(done) == [
        {"interruptId": item["id"], "status": "resolved", "payload": {"approved": True}}
    ]
    assert results(done) == [item["toolCallId"]]
    assert done["interrupts"] == []
    assert "Sent the email to ada@example.com" in said(done)
    assert sent_to(outbox, item["toolCallId"]) == ["ada@example.com"]


@requires_node
async def test_registered_tool_reject(gateway_url: str, thread_id: str, outbox: Outbox):
    asked, done = await chat(
        gateway_url,
        thread_id,
        REGISTERED,
        {"send": EMAIL},
        {"decide": [{"index": 0, "approve": False}]},
    )
    [item] = approvals(asked, 1)
    assert resumed_with(done)[0]["payload"] == {"approved": False}
    assert results(done) == []
    assert "did not carry out the email to ada@example.com: you rejected it" in said(done)
    assert sent_to(outbox, item["toolCallId"]) == []


@requires_node
async def test_registered_tool_approve_with_edits(gateway_url: str, thread_id: str, outbox: Outbox):
    decision = {"index": 0, "approve": True, "editedArgs": EDITED}
    asked, done = await chat(
        gateway_url, thread_id, REGISTERED, {"send": EMAIL}, {"decide": [decision]}
    )
    [item] = approvals(asked, 1)
    assert resumed_with(done)[0]["payload"] == {"approved": True, "editedArgs": EDITED}
    assert results(done) == [item["toolCallId"]]
    assert "Sent the email to grace@example.com" in said(done)
    assert sent_to(outbox, item["toolCallId"]) == ["grace@example.com"]


@requires_node
async def test_registered_tool_invalid_edits_stay_on_the_client(
    gateway_url: str, thread_id: str, outbox: Outbox
):
    """The registered zod schema refuses bad edits before anything is sent."""
    bad = {"index": 0, "approve": True, "editedArgs": {**EDITED, "to": "grace"}}
    job = {
        "url": f"{gateway_url}/agents/assistant",
        "threadId": thread_id,
        "tools": REGISTERED,
        "steps": [{"send": EMAIL}, {"decide": [bad]}],
    }
    asked, refused = (await run_node("tool_approval_chat.mjs", job))["steps"]
    [item] = approvals(asked, 1)
    assert refused["requests"] == []
    [still] = refused["interrupts"]
    assert (still["id"], still["status"]) == (item["id"], "error")
    assert still["error"]["code"] == "invalid-edited-args"
    assert sent_to(outbox, item["toolCallId"]) == []


@requires_node
async def test_registered_tool_three_emails_as_one_batch(
    gateway_url: str, thread_id: str, outbox: Outbox
):
    decisions = [
        {"index": 0, "approve": True},
        {"index": 1, "approve": False},
        {"index": 2, "approve": True, "editedArgs": {**EDITED, "to": "cyril@example.com"}},
    ]
    asked, done = await chat(
        gateway_url,
        thread_id,
        REGISTERED,
        {"send": EMAILS},
        {"decide": decisions, "transaction": True},
    )
    ada, bob, cy = approvals(asked, 3)
    assert [i["originalArgs"]["to"] for i in (ada, bob, cy)] == [
        "ada@example.com",
        "bob@example.com",
        "cy@example.com",
    ]
    assert len({i["toolCallId"] for i in (ada, bob, cy)}) == 3
    by_id = {entry["interruptId"]: entry["payload"] for entry in resumed_with(done)}
    assert by_id == {
        ada["id"]: {"approved": True},
        bob["id"]: {"approved": False},
        cy["id"]: {"approved": True, "editedArgs": {**EDITED, "to": "cyril@example.com"}},
    }
    assert sorted(results(done)) == sorted([ada["toolCallId"], cy["toolCallId"]])
    assert sent_to(outbox, bob["toolCallId"]) == []
    assert sent_to(outbox, cy["toolCallId"]) == ["cyril@example.com"]
    assert "did not carry out the email to bob@example.com: you rejected it" in said(done)


@requires_node
async def test_registered_tool_approve_all(gateway_url: str, thread_id: str, outbox: Outbox):
    """`resolveInterrupts(true)`: TanStack's bulk answer for payloadless tool approvals."""
    asked, done = await chat(gateway_url, thread_id, REGISTERED, {"send": EMAILS}, {"bulk": True})
    pending = approvals(asked, 3)
    assert sorted(results(done)) == sorted(i["toolCallId"] for i in pending)
    assert [sent_to(outbox, i["toolCallId"]) for i in pending] == [
        ["ada@example.com"],
        ["bob@example.com"],
        ["cy@example.com"],
    ]


def generic_items(step: dict[str, Any], count: int) -> list[dict[str, Any]]:
    items = step["interrupts"]
    assert [(i["kind"], i["canResolve"], i["reason"]) for i in items] == [
        ("generic", True, "tool_call")
    ] * count, items
    assert all(isinstance(i["wireToolCallId"], str) for i in items), items
    return items


@requires_node
@pytest.mark.parametrize("tools", [[], ["fixture:sendEmailDrifted"]], ids=["none", "drifted"])
async def test_unregistered_tool_gets_generic_items(
    gateway_url: str, thread_id: str, outbox: Outbox, tools: list[str]
):
    """Without the tool (or with another schema): the same interrupts, as generic items."""
    decisions = [
        {"index": 0, "approve": True},
        {"index": 1, "approve": False},
        {"index": 2, "approve": True, "editedArgs": EDITED},
    ]
    asked, done = await chat(gateway_url, thread_id, tools, {"send": EMAILS}, {"decide": decisions})
    ada, bob, cy = generic_items(asked, 3)
    for item in (ada, bob, cy):
        assert item["binding"]["kind"] == "generic"
        assert item["toolName"] is None
    by_id = {entry["interruptId"]: entry["payload"] for entry in resumed_with(done)}
    assert by_id == {
        ada["id"]: {"approved": True},
        bob["id"]: {"approved": False},
        cy["id"]: {"approved": True, "editedArgs": EDITED},
    }
    assert sorted(results(done)) == sorted([ada["wireToolCallId"], cy["wireToolCallId"]])
    assert sent_to(outbox, cy["wireToolCallId"]) == ["grace@example.com"]
    assert sent_to(outbox, bob["wireToolCallId"]) == []


@requires_node
async def test_unregistered_tool_single_approval(gateway_url: str, thread_id: str, outbox: Outbox):
    asked, done = await chat(
        gateway_url, thread_id, [], {"send": EMAIL}, {"decide": [{"index": 0, "approve": True}]}
    )
    [item] = generic_items(asked, 1)
    assert results(done) == [item["wireToolCallId"]]
    assert sent_to(outbox, item["wireToolCallId"]) == ["ada@example.com"]


@requires_node
async def test_registered_tools_leave_the_form_generic(gateway_url: str, thread_id: str):
    """fileQuarterlyReport needs no approval: its input_required form stays a generic item."""
    answer = {"index": 0, "raw": {"quarter": "Q2", "year": 2026, "revenue": 10.5}}
    asked, done = await chat(
        gateway_url,
        thread_id,
        REGISTERED,
        {"send": "File the quarterly report"},
        {"decide": [answer]},
    )
    [form] = asked["interrupts"]
    assert (form["kind"], form["canResolve"], form["reason"]) == ("generic", True, "input_required")
    assert "Filed the Q2 2026 quarterly report" in said(done)


# --------------------------------------------------------------------------
# Durability: the new interrupt shape replays (old threads keep theirs: see
# tests/workflows/test_replay.py and assistant.TANSTACK_APPROVALS_PATCH).
# --------------------------------------------------------------------------


async def test_threads_with_tool_approvals_replay(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    [email] = interrupts(await run(http, thread_id, text=EMAIL))
    edit = {"approved": True, "editedArgs": EDITED}
    await run(http, thread_id, resume=[resolve(email, edit)])
    ada, bob, cy = interrupts(await run(http, thread_id, text=EMAILS))
    answers = [resolve(ada, {"approved": True}), resolve(bob, {"approved": False}), cancel(cy)]
    await run(http, thread_id, resume=answers)
    [form] = interrupts(await run(http, thread_id, text="File the quarterly report"))
    await run(
        http, thread_id, resume=[resolve(form, {"quarter": "Q4", "year": 2026, "revenue": 1})]
    )

    assert binding_of(email)["kind"] == "tool-approval"
    assert form["responseSchema"] == TOOLS["fileQuarterlyReport"].parameters
    state = await thread_state(client, thread_id)
    assert [r.interrupt["responseSchema"] for r in state.interrupts[:4]] == [
        approval_schema(SEND_EMAIL)
    ] * 4
    history = await client.get_workflow_handle(thread_workflow_id(thread_id)).fetch_history()
    markers = [
        event.marker_recorded_event_attributes
        for event in history.events
        if event.HasField("marker_recorded_event_attributes")
    ]
    assert any(TANSTACK_APPROVALS_PATCH.encode() in m.SerializeToString() for m in markers)
    replayer = Replayer(workflows=[ThreadWorkflow], data_converter=pydantic_data_converter)
    await replayer.replay_workflow(history)
