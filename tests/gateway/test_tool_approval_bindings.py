"""TanStack-native tool approvals: what a `tool_call` interrupt accepts and how the
gateway binds it.

A `tool_call` interrupt announces TanStack AI's approval envelope as its
`responseSchema` and carries a `tool-approval` binding, so a client that
registered the same tool (`examples/tools/`) with `needsApproval: true` shows a
`tool-approval` item, and any other client a resolvable `generic` item: checked
here without a server, and against the real `@tanstack/ai-client`'s
InterruptManager (tests/node).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import pytest

from ag_ui_temporal.demo.tools import (
    SEND_EMAIL,
    TOOL_CALL_METADATA_KEY,
    ToolSpec,
    approval_schema,
)
from ag_ui_temporal.gateway.tanstack import (
    ApprovalEnvelope,
    approval_schema_hash,
    bind_interrupt,
    digest_interrupt_json,
    generic_binding,
    hash_schema_input,
    interrupt_json_hash,
    read_approval_response_schema,
    tool_approval_binding,
)
from ag_ui_temporal.workflows.contract.tools import approval_response_schema
from ag_ui_temporal.workflows.schema import payload_problem, schema_problem
from tests.gateway.approval_tools import (
    ADA,
    ARCHIVE_THREAD,
    EDITED,
    TAG_THREAD,
    binding_of,
    tool_call_interrupt,
)
from tests.node_clients import requires_node, run_node

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
    assert ARCHIVE_THREAD.approval_payloads is not None
    reject = ARCHIVE_THREAD.approval_payloads.reject
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
    """A tool_call responseSchema other than TanStack's envelope, as parked threads hold."""
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
ANSWERED: dict[str, tuple[ToolSpec, dict[str, Any], dict[str, Any] | None]] = {
    # tool, the app's decision -> what the client submits (None: refused)
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
# An agent registered with approve_with_edits=False: no editedArgs to offer.
# --------------------------------------------------------------------------

NO_EDITS = tool_call_interrupt(responseSchema=approval_response_schema(None))
"""A `sendEmail` approval as such an agent asks it (tests/agents/test_approval_options.py
checks that the thread's interrupt is this envelope)."""


def test_an_approval_without_edits_is_bound_as_a_tool_without_input() -> None:
    binding = binding_of(bind_interrupt(NO_EDITS, "run-1"))
    assert binding["kind"] == "tool-approval"
    assert binding["inputSchemaHash"] == hash_schema_input(None)
    assert payload_problem(NO_EDITS["responseSchema"], {"approved": True}) is None
    edited = {"approved": True, "editedArgs": EDITED}
    assert payload_problem(NO_EDITS["responseSchema"], edited) is not None


@requires_node
async def test_client_resolves_an_approval_without_edits() -> None:
    """A client that registered `sendEmail` with its input schema gets a resolvable generic
    item (the input hashes differ); one that registered it without one, as such an agent asks
    it, a tool-approval item. A plain approve or reject is submitted and our schema takes it.
    Edits are submitted too (the client does not check raw JSON Schema): the server's
    schema is what refuses them (`INVALID_PAYLOAD`, tests/agents/test_approval_options.py)."""
    cases: dict[str, tuple[list[str], dict[str, Any], str]] = {
        "published, approve": (["published:sendEmail"], {"approve": True}, "generic"),
        "without input, reject": (
            ["fixture:sendEmailNoEdits"],
            {"approve": False},
            "tool-approval",
        ),
        "without input, edits": (
            ["fixture:sendEmailNoEdits"],
            {"approve": True, "editedArgs": EDITED},
            "tool-approval",
        ),
    }
    jobs = [manager_job(NO_EDITS, tools, [decision]) for tools, decision, _ in cases.values()]
    result = await run_node("tool_approval_defs.mjs", {"mode": "managers", "cases": jobs})
    got = dict(zip(cases, result["results"], strict=True))
    for key, (_, decision, kind) in cases.items():
        [item] = got[key]["items"]
        assert (item["kind"], item["canResolve"], item["error"]) == (kind, True, None)
        [resolution] = got[key]["submission"]["resolutions"]
        sent = {"approved": decision["approve"]}
        if "editedArgs" in decision:
            sent["editedArgs"] = decision["editedArgs"]
        assert resolution["payload"] == sent
        refused = payload_problem(NO_EDITS["responseSchema"], sent) is not None
        assert refused is ("editedArgs" in sent)
