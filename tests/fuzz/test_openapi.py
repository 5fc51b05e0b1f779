"""Schemathesis over every operation of the gateway's OpenAPI description, served on a
real port in front of the real Temporal server and worker: never a 5xx, never a stack
trace, and every JSON answer matches the schema the description declares for it."""

from __future__ import annotations

import asyncio

import httpx
import schemathesis
from hypothesis import given
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Err
from schemathesis.specs.openapi.checks import response_schema_conformance

from tests.fuzz.conftest import FUZZ

STACK_TRACE = ("Traceback (most recent call last)", 'File "/')


def fuzz_every_operation(base_url: str) -> list[str]:
    """Run each operation's examples (sync: schemathesis calls with `requests`)."""
    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json")
    labels = []
    for result in schema.get_all_operations():
        if isinstance(result, Err):
            raise result.err()  # an operation of our own schema that cannot be fuzzed
        operation = result.ok()
        labels.append(operation.label)

        @FUZZ
        @given(case=operation.as_strategy())
        def check(case: schemathesis.Case) -> None:
            response = case.call(base_url=base_url, timeout=30)
            case.validate_response(
                response, checks=[not_a_server_error, response_schema_conformance]
            )
            assert not any(marker in response.text for marker in STACK_TRACE), response.text

        check()
    return labels


async def test_no_operation_fails_on_generated_input(gateway_url: str):
    # In a worker thread: this loop keeps serving the gateway the requests go to.
    labels = await asyncio.to_thread(fuzz_every_operation, gateway_url)
    assert {"POST /agents/{agent}", "GET /agents/{agent}", "GET /approvals"} <= set(labels)


async def test_found_by_fuzzing_a_forged_cursor_is_a_400(http: httpx.AsyncClient):
    for cursor in ["\U0010caa9", "Infinity", "e30", "W10="]:  # not ASCII, not base64, not JSON
        response = await http.get(
            "/approvals",
            params={"assignee": "bob", "cursor": cursor},
            headers={"X-Principal": "bob"},  # lists are their assignee's own
        )
        assert response.status_code == 400, (cursor, response.text)
        assert "cursor" in response.json()["detail"]


async def test_found_by_fuzzing_a_lone_surrogate_is_a_422(http: httpx.AsyncClient):
    body = b'{"threadId": "t-surrogate", "runId": "r\\ud800", "messages": []}'
    response = await http.post(
        "/agents/assistant", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 422 and "surrogate" in response.json()["detail"]
