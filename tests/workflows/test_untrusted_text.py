"""No user or producer text can stall a worker: parsing and schema checks take linear time.

Inputs are 100x today's limits (`max_string_length` is 100,000 characters: 10M here). Times
are only compared as ratios: ten times the input may take ~10x (linear), and a quadratic or
exponential regex would take 100x or forever, so the generous bound below cannot flake.
"""

from __future__ import annotations

import math
import re
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from temporalio import workflow
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from ag_ui_temporal.demo.sentences import EMAIL, expense_args, find_emails, report_or_email_calls
from ag_ui_temporal.demo.tools import (
    FILE_QUARTERLY_REPORT,
    SEND_EMAIL,
    SUBMIT_EXPENSE,
    approval_schema,
)
from ag_ui_temporal.examples.orders import SHIPPING_SCHEMA
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract.chains import DECISION_SCHEMA
from ag_ui_temporal.workflows.producers import offer_in_thread
from ag_ui_temporal.workflows.schema import (
    INVALID_RESPONSE_SCHEMA,
    LINEAR_FORMATS,
    MAX_FORMAT_LENGTH,
    payload_problem,
    schema_problem,
)

HUNDRED_TIMES = 100 * Settings.model_fields["max_string_length"].default  # 10M characters
LINEAR_RATIO = 40
"""10x the input: ~10x the time if linear, 100x if quadratic."""
FLOOR = 0.02
"""Seconds: a small input timed below this compares as this (timer and scheduler noise)."""


def seconds(check: Callable[[Any], object], argument: Any) -> float:
    best = math.inf
    for _ in range(3):  # the fastest of three: a busy machine only ever adds time
        start = time.perf_counter()
        check(argument)
        best = min(best, time.perf_counter() - start)
    return best


def assert_linear(check: Callable[[Any], object], make: Callable[[int], Any], large: int) -> None:
    small_input, large_input = make(large // 10), make(large)
    small = seconds(check, small_input)
    bound = LINEAR_RATIO * max(small, FLOOR)
    # The fastest of three large runs is under the bound exactly when one of them is: the
    # first that is ends the check (the other two would only cost time).
    timings = []
    for _ in range(3):
        start = time.perf_counter()
        check(large_input)
        timings.append(time.perf_counter() - start)
        if timings[-1] < bound:
            return
    raise AssertionError(f"{small:.4f}s, then {min(timings):.4f}s for 10x")


# -- item 11: the demo's sentences, as the offline model reads them ----------------------------

SENTENCES = [
    "Send an email to ada@example.com saying hi",
    "Send emails to ada@example.com, bob@example.com and cy@example.com",
    "mail first.last+tag@sub.example.co.uk, then x@y.z.",
    "ümlaut@exämple.com and ü@ü.ü and a@b and a@b. and @x.y and a@@b.c",
    "a@b.c.d@e.f a.b@c-d.e-f.g_h --@--.--",
]


@pytest.mark.parametrize("text", SENTENCES)
def test_find_emails_reads_the_demo_sentences_as_before(text: str):
    assert find_emails(text) == re.findall(EMAIL, text)


@settings(max_examples=400, derandomize=True, deadline=None)
@given(
    st.lists(st.sampled_from([*"ab_1.+-@ é\n,;!ß", "a@b.c", ".co", "@x"]), max_size=30).map("".join)
)
@example("a@b.c.+x@d.e")
def test_find_emails_is_findall(text: str):
    """The same addresses for every text as the pattern would find."""
    assert find_emails(text) == re.findall(EMAIL, text)


@pytest.mark.parametrize(
    ("unit", "large"),
    [("a", HUNDRED_TIMES), ("é", HUNDRED_TIMES), ("a@", HUNDRED_TIMES // 10), ("a@b.", 10**6)],
)
def test_find_emails_takes_linear_time(unit: str, large: int):
    assert_linear(find_emails, lambda n: unit * (n // len(unit)), large)


def read(text: str) -> tuple[Any, list[Any]]:
    """What the offline demo model reads in a user message (`demo.offline`)."""
    return expense_args(text), report_or_email_calls(text)


@pytest.mark.parametrize(
    "filler",
    ["a", "reimburse 1 ", "reimburse 1,", "saying ", " ", "email "],
)
def test_the_demo_sentences_read_a_huge_message_in_linear_time(filler: str):
    """The report: a 60K-character message held the worker's GIL for 27 s (13.5 s here)."""
    texts = {
        n: "Send an email to " + filler * (n // len(filler)) + "!"
        for n in (HUNDRED_TIMES // 10, HUNDRED_TIMES)
    }
    timings = {}
    for n, text in texts.items():
        start = time.perf_counter()
        expense, calls = read(text)
        timings[n] = time.perf_counter() - start
        assert expense is None and not calls
    small, big = timings.values()
    assert big < LINEAR_RATIO * max(small, FLOOR), timings


# -- item 12: response schemas --------------------------------------------------------------

BUILT_IN = [
    approval_schema(SEND_EMAIL),
    approval_schema(SUBMIT_EXPENSE),
    FILE_QUARTERLY_REPORT.parameters,
    DECISION_SCHEMA,
    SHIPPING_SCHEMA,
]


@pytest.mark.parametrize("schema", BUILT_IN)
def test_the_built_in_schemas_stay_valid(schema: dict[str, Any]):
    assert schema_problem(schema) is None


def test_a_nested_quantifier_pattern_takes_linear_time():
    schema = {"type": "string", "pattern": "^(a+)+$"}  # doubles per character on `re`
    assert payload_problem(schema, "a" * 40) is None
    assert "does not match" in (payload_problem(schema, "a" * 40 + "!") or "")
    assert_linear(
        lambda text: payload_problem(schema, text), lambda n: "a" * n + "!", HUNDRED_TIMES
    )


EVIL = "^(a+)+$"


@pytest.mark.parametrize(
    "schema",
    [
        {"patternProperties": {EVIL: {"type": "string"}}},
        {"patternProperties": {EVIL: True}, "additionalProperties": False},
        {"patternProperties": {EVIL: True}, "unevaluatedProperties": False},
        {"allOf": [{"patternProperties": {EVIL: True}}], "unevaluatedProperties": False},
        {"propertyNames": {"pattern": EVIL}},
    ],
    ids=["patternProperties", "additional", "unevaluated", "unevaluated-nested", "names"],
)
def test_property_name_patterns_take_linear_time(schema: dict[str, Any]):
    """jsonschema also matches `patternProperties` in two helpers: both run on RE2 too."""
    assert payload_problem(schema, {"aaaa": "x"}) is None
    assert_linear(
        lambda payload: payload_problem(schema, payload),
        lambda n: {"a" * n + "!": 1},
        HUNDRED_TIMES,
    )


@pytest.mark.parametrize(
    "pattern", ["(?=a)", "(?!a)b", "(?<=a)b", "(?<!a)b", r"(a)\1", "a++", "(?>a)"]
)
def test_a_pattern_re2_cannot_run_makes_the_schema_invalid(pattern: str):
    for schema, payload in (
        ({"pattern": pattern}, "ab"),
        ({"patternProperties": {pattern: True}}, {"ab": 1}),
    ):
        assert (schema_problem(schema) or "").startswith("invalid responseSchema: ")
        assert payload_problem(schema, payload) is not None  # offered anyway: nothing applies


def test_ecma_unicode_escapes_work_on_re2():
    schema = {"type": "string", "pattern": "^[\\u0041-\\u005a]+$"}  # RE2 spells it \x{0041}
    assert schema_problem(schema) is None
    assert payload_problem(schema, "ABC") is None
    assert payload_problem(schema, "abc") is not None
    escaped = {"type": "string", "pattern": "^\\\\u0041$"}  # a backslash, then "u0041"
    assert payload_problem(escaped, "\\u0041") is None


def test_the_regex_format_is_re2():
    schema = {"type": "string", "format": "regex"}
    assert payload_problem(schema, "^[a-z]+(?:-[a-z]+)*$") is None
    assert payload_problem(schema, "(?=a)") is not None


@pytest.mark.parametrize("fmt", sorted(LINEAR_FORMATS.checkers))
def test_every_format_refuses_strings_over_the_bound(fmt: str):
    for unit in ("a", "é", "1"):
        assert payload_problem({"format": fmt}, unit * (MAX_FORMAT_LENGTH + 1)) is not None
    huge = "é" * HUNDRED_TIMES
    assert_linear(
        lambda text: payload_problem({"format": fmt}, text), lambda n: huge[:n], len(huge)
    )


IRIS = {
    "http://é.example/ü/ß?q=\ue000#frag": True,
    "urn:ex:𐀀": True,  # astral `ucschar`
    "http://[::1]:80/": True,
    "mailto:ada@example.com": True,
    "é:x": False,  # not in a scheme
    "http://a/\ue000": False,  # private use: in the query only
    "http://a#\ue000": False,
    "http://a/b c": False,
    "http://a/\n": False,
    "": False,
}


@pytest.mark.parametrize(("iri", "valid"), IRIS.items())
def test_iri_follows_rfc_3987(iri: str, valid: bool):
    assert (payload_problem({"format": "iri"}, iri) is None) is valid
    assert payload_problem({"format": "iri-reference"}, iri) is None or not valid


def test_iri_takes_linear_time_up_to_the_bound():
    """8,000 non-ASCII characters took 6 s on rfc3987-syntax."""
    schema = {"format": "iri"}
    assert payload_problem(schema, "http://a/" + "é" * (MAX_FORMAT_LENGTH - 9)) is None
    assert_linear(
        lambda text: payload_problem(schema, text),
        lambda n: "http://a/" + "é" * (n - 9),
        MAX_FORMAT_LENGTH,
    )


@workflow.defn(sandboxed=False)
class OffersALookahead:
    @workflow.run
    async def run(self, thread_id: str) -> str:
        try:
            await offer_in_thread(
                thread_id, message="How?", response_schema={"type": "string", "pattern": "(?=a)"}
            )
        except ApplicationError as refused:
            return f"{refused.type}: {refused.message}"
        return "offered"


async def test_a_producer_cannot_offer_a_pattern_re2_cannot_run(client: Client, thread_id: str):
    queue = f"re2-{uuid.uuid4().hex[:8]}"
    async with Worker(client, task_queue=queue, workflows=[OffersALookahead]):
        handle = await client.start_workflow(
            OffersALookahead.run, thread_id, id=f"producer-{thread_id}", task_queue=queue
        )
        answer = await handle.result()
    assert answer.startswith(f"{INVALID_RESPONSE_SCHEMA}: invalid responseSchema")
