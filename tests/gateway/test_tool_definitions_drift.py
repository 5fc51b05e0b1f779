"""The published TypeScript tool definitions (`examples/tools/`, zod) against the Python
tools: the same JSON Schemas byte for byte (equal hashes), drift on either side caught,
and `tsc --strict` content with them (tests/node)."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from ag_ui_temporal.demo.tools import (
    SEND_EMAIL,
    TOOLS,
    ApprovalPayloads,
    ToolSpec,
    approval_schema,
)
from ag_ui_temporal.gateway.tanstack import (
    approval_schema_hash,
    canonical_interrupt_json,
    hash_schema_input,
    interrupt_json_hash,
)
from tests.gateway.approval_tools import FIXTURES, NOTE
from tests.node_clients import requires_node, run_node

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
async def node() -> list[dict[str, Any]]:
    """The definitions as TanStack reads them, and `tsc`'s diagnostics: one Node process."""
    definitions = {"mode": "definitions", "fixtures": ["sendEmailDrifted", *FIXTURES]}
    jobs = {"mode": "jobs", "jobs": [definitions, {"mode": "typecheck"}]}
    results: list[dict[str, Any]] = (await run_node("tool_approval_defs.mjs", jobs))["results"]
    return results


@pytest.fixture(scope="module")
def published(node: list[dict[str, Any]]) -> dict[str, Any]:
    return node[0]


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
            SEND_EMAIL, approval_payloads=ApprovalPayloads(reject=NOTE)
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
def test_published_definitions_typecheck(node: list[dict[str, Any]]) -> None:
    """`tsc --strict` accepts examples/tools, and a front end using them as TanStack's
    guide does (`interrupt.originalArgs.to` typed by the tool), against the real types."""
    assert node[1]["diagnostics"] == []
