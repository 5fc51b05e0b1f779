"""The payload validator against any schema and any payload: an answer, never an exception.

Valid schemas accept every payload generated from them; broken
schemas (dangling or cyclic `$ref`s, types that are not types, bad regexes)
refuse payloads with a problem string, and producers cannot offer them.
Strings grown to the configured maximum are checked about as fast as a plain one.
"""

from __future__ import annotations

import statistics
import time
import uuid
from datetime import UTC
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from schemathesis.generation.jsonschema.builder import build
from temporalio import workflow
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode
from temporalio.worker import Worker

from ag_ui_temporal.demo.tools import (
    FILE_QUARTERLY_REPORT,
    SEND_EMAIL,
    SUBMIT_EXPENSE,
    approval_schema,
)
from ag_ui_temporal.examples.orders import SHIPPING_SCHEMA
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import thread_workflow_id
from ag_ui_temporal.workflows.contract.chains import DECISION_SCHEMA
from ag_ui_temporal.workflows.producers import offer_in_thread
from ag_ui_temporal.workflows.schema import (
    INVALID_RESPONSE_SCHEMA,
    LINEAR_FORMATS,
    payload_problem,
    schema_problem,
)
from tests.fuzz.conftest import FUZZ

SCHEMAS: list[dict[str, Any]] = [
    approval_schema(SEND_EMAIL),
    approval_schema(SUBMIT_EXPENSE),
    FILE_QUARTERLY_REPORT.parameters,
    DECISION_SCHEMA,
    SHIPPING_SCHEMA,
    {"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}}},
    {
        "$defs": {"n": {"type": "integer", "minimum": 0}},
        "type": "array",
        "items": {"$ref": "#/$defs/n"},
    },
]
FORMATS = {
    "email": st.emails(),
    "date-time": st.datetimes(timezones=st.just(UTC)).map(lambda moment: moment.isoformat()),
}


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Payloads valid for `schema`. hypothesis-jsonschema 0.23.1 cannot draw objects with the
    installed hypothesis (`many.more` is gone), so this uses schemathesis' own generator."""
    return build(schema, draft=jsonschema_rs.Draft202012, formats=FORMATS)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)

KEYWORDS = [
    "type", "properties", "items", "required", "enum", "const", "pattern", "minimum",
    "maximum", "multipleOf", "minLength", "format", "oneOf", "anyOf", "allOf", "not",
    "additionalProperties", "$ref", "$defs", "$dynamicRef", "$id", "$schema", "if", "then",
    "prefixItems", "uniqueItems", "dependentRequired", "contains", "propertyNames",
]  # fmt: skip
REFS = st.sampled_from(["#", "#/$defs/a", "#/nope", "#x", "https://example.invalid/s.json", "::"])
schemas = st.recursive(
    st.booleans() | st.dictionaries(st.sampled_from(KEYWORDS), json_values | REFS, max_size=3),
    lambda inner: st.dictionaries(
        st.sampled_from(KEYWORDS),
        inner | st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
        max_size=4,
    ),
    max_leaves=12,
)


@FUZZ
@given(st.sampled_from(SCHEMAS).flatmap(lambda s: st.tuples(st.just(s), from_schema(s))))
def test_generated_valid_payloads_are_accepted(case: tuple[dict[str, Any], Any]):
    schema, payload = case
    assert payload_problem(schema, payload) is None


@FUZZ
@given(schema=st.sampled_from(SCHEMAS), payload=json_values)
def test_any_payload_gets_an_answer(schema: dict[str, Any], payload: Any):
    problem = payload_problem(schema, payload)
    assert problem is None or problem  # never an empty one


@FUZZ
@given(schema=schemas | json_values, payload=json_values)
@example(schema={"$ref": "#", "properties": {"a": {"$ref": "#"}}}, payload={"a": 1})
@example(schema={"$ref": "#/nope"}, payload=1)
@example(schema={"$ref": "https://example.invalid/s.json"}, payload=1)
@example(schema={"$dynamicRef": "#x"}, payload=1)
@example(schema={"type": 5}, payload=1)
@example(schema={"minimum": "x"}, payload=1)
@example(schema={"pattern": "("}, payload="(")
@example(schema=5, payload=1)
@example(schema=[], payload=1)
def test_any_schema_never_crashes_the_validator(schema: Any, payload: Any):
    problem = payload_problem(schema, payload)
    assert problem is None or problem  # never an empty one
    invalid = schema_problem(schema)
    assert invalid is None or invalid.startswith("invalid responseSchema: ")


EVIL = "^(a+)+$"
"""Doubles its work per character on a backtracking engine."""
GROWN_SCHEMAS: list[Any] = [
    *SCHEMAS,
    {"type": "string", "pattern": EVIL},
    {"type": "array", "items": {"type": "string", "pattern": "^([a-zé]+)*$"}},
    {"patternProperties": {EVIL: True}, "additionalProperties": False},
    {"patternProperties": {EVIL: True}, "unevaluatedProperties": False},
    {"propertyNames": {"pattern": EVIL}},
    *({"type": "string", "format": name} for name in sorted(LINEAR_FORMATS.checkers)),
]
GROWN_UNITS = ["a", "é", "a@", "1", "http://é", "-", " ", "{a", "P1", "/", "a."]
SLOW_RATIO = 20
SLOW_FLOOR = 1.0
"""Seconds: a grown payload may take 20x the plain one, and at least this (a stall: forever)."""


def grown_payloads(limit: int) -> st.SearchStrategy[Any]:
    """A string of `limit` characters (and one past it) as a value, a key, or in an answer."""
    text = st.tuples(st.sampled_from(GROWN_UNITS), st.sampled_from([limit, limit + 1])).map(
        lambda unit_length: (unit_length[0] * unit_length[1])[: unit_length[1]]
    )
    return st.one_of(
        text,
        text.map(lambda t: [t]),
        text.map(lambda t: {t: t}),
        text.map(lambda t: {"approved": True, "editedArgs": {"to": t, "subject": t, "body": t}}),
    )


def seconds(schema: Any, payload: Any) -> float:
    start = time.perf_counter()
    payload_problem(schema, payload)
    return time.perf_counter() - start


def test_strings_at_the_maximum_are_checked_quickly(settings: Settings):
    limit = settings.max_string_length
    plain_payload = "x" * limit
    plain = statistics.median(seconds({"type": "string"}, plain_payload) for _ in range(5))

    @FUZZ
    @given(schema=st.sampled_from(GROWN_SCHEMAS), payload=grown_payloads(limit))
    @example(schema={"type": "string", "pattern": EVIL}, payload="a" * limit + "!")
    @example(schema={"type": "string", "format": "iri"}, payload="é" * limit)
    def check(schema: Any, payload: Any) -> None:
        took = seconds(schema, payload)
        assert took <= max(SLOW_RATIO * plain, SLOW_FLOOR), (took, plain, schema)
        problem = payload_problem(schema, payload)
        assert problem is None or problem  # never an empty one

    check()


@pytest.mark.parametrize(
    ("schema", "payload"),
    [
        ({"$ref": "#/nope"}, 1),
        ({"$ref": "https://example.invalid/s.json"}, 1),  # never fetched
        ({"$dynamicRef": "#x"}, {}),
        ({"type": 5}, "x"),
        ({"minimum": "x"}, 1),
        ({"pattern": "("}, "("),
        ({"$ref": "#", "properties": {"a": {"$ref": "#"}}}, {"a": 1}),
    ],
)
def test_a_schema_that_cannot_be_applied_refuses_the_payload(schema: Any, payload: Any):
    """Lenient on purpose: an invalid schema that still applies answers as before, so an
    interrupt parked with it replays the same decisions (the producers refuse new ones)."""
    problem = payload_problem(schema, payload)
    assert problem is not None and "responseSchema" in problem


@workflow.defn(sandboxed=False)
class OffersABrokenSchema:
    @workflow.run
    async def run(self, thread_id: str) -> str:
        try:
            await offer_in_thread(thread_id, message="How?", response_schema={"type": 5})
        except ApplicationError as refused:
            return f"{refused.type}: {refused.message}"
        return "offered"


async def test_a_producer_cannot_offer_a_broken_schema(client: Client, thread_id: str):
    queue = f"fuzz-{uuid.uuid4().hex[:8]}"
    async with Worker(client, task_queue=queue, workflows=[OffersABrokenSchema]):
        answer = await client.execute_workflow(
            OffersABrokenSchema.run, thread_id, id=f"producer-{thread_id}", task_queue=queue
        )
    assert answer.startswith(f"{INVALID_RESPONSE_SCHEMA}: invalid responseSchema")
    with pytest.raises(RPCError) as missing:  # nothing reached the thread: it was never started
        await client.get_workflow_handle(thread_workflow_id(thread_id)).describe()
    assert missing.value.status == RPCStatusCode.NOT_FOUND
