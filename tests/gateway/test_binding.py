"""ag_ui_temporal.gateway.tanstack against vectors and the real @tanstack/ai (tests/node)."""

from __future__ import annotations

import copy
import json
import random
import re
import shutil
import struct
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ag_ui_temporal.gateway.tanstack import (
    BINDING_METADATA_KEY,
    BINDING_VERSION,
    bind_interrupt,
    canonical_interrupt_json,
    digest_interrupt_json,
    generic_binding,
    interrupt_json_hash,
    with_interrupt_binding,
)

HERE = Path(__file__).parent
VECTORS = json.loads(
    (HERE / "vectors" / "tanstack-binding-vectors.json").read_text(encoding="utf-8")
)
NODE_DIR = HERE.parent / "node"
NODE_SCRIPT = NODE_DIR / "binding_vectors.mjs"
SCHEMA = VECTORS["vectors"][0]["input"]
SCHEMA_DIGEST = VECTORS["vectors"][0]["digest"]

# --------------------------------------------------------------------------
# Vectors produced by the library itself.
# --------------------------------------------------------------------------


def test_constants_match_library() -> None:
    assert VECTORS["INTERRUPT_BINDING_METADATA_KEY"] == BINDING_METADATA_KEY
    assert VECTORS["INTERRUPT_BINDING_VERSION"] == BINDING_VERSION


@pytest.mark.parametrize("vector", VECTORS["vectors"], ids=lambda v: v["name"])
def test_vector_canonical_and_digest(vector: dict[str, Any]) -> None:
    for value in (vector["input"], json.loads(vector["inputJsonText"])):
        canonical = canonical_interrupt_json(value)
        assert canonical == vector["canonical"]
        assert digest_interrupt_json(canonical) == vector["digest"]
        assert interrupt_json_hash(value) == vector["digest"]


def test_empty_string_digest() -> None:
    assert digest_interrupt_json("") == VECTORS["emptyStringDigest"]


def _python_analogue(name: str) -> Any:
    """Python values that take the same rejection path as the JS vector input.

    Python has no ``undefined`` or array holes; a function is the nearest
    non-JSON primitive (JS ``typeof`` "function" hits the same branch).
    """
    analogues: dict[str, Any] = {
        "undefinedProperty": {"present": 1, "missing": lambda: None},
        "NaN": float("nan"),
        "Infinity": float("inf"),
        "date": datetime(2024, 1, 1, tzinfo=UTC),
        "sparseArrayHole": [1, print, 3],
    }
    return analogues[name]


@pytest.mark.parametrize("name", sorted(VECTORS["throwing"]))
def test_vector_throwing(name: str) -> None:
    expected = VECTORS["throwing"][name]
    with pytest.raises(TypeError) as raised:
        canonical_interrupt_json(_python_analogue(name))
    assert f"TypeError: {raised.value}" == expected


def test_example_bound_descriptor() -> None:
    expected = VECTORS["exampleBoundDescriptor"]
    binding = expected["metadata"][BINDING_METADATA_KEY]
    unbound = {key: value for key, value in expected.items() if key != "metadata"}
    bound = bind_interrupt(unbound, binding["interruptedRunId"])
    assert bound == expected
    assert list(bound["metadata"][BINDING_METADATA_KEY]) == list(binding)
    assert json.dumps(bound) == json.dumps(expected)
    direct = generic_binding(
        expected["id"], binding["interruptedRunId"], expected["responseSchema"], None
    )
    assert direct == binding


# --------------------------------------------------------------------------
# Canonical JSON details.
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (-0.0, "0"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (1e-6, "0.000001"),
        (1.0, "1"),
        (2**53 + 1, "9007199254740992"),
        (10**21, "1e+21"),
        (5e-324, "5e-324"),
        (-1.5e-10, "-1.5e-10"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (True, "true"),
        ([1, True, False, 0], "[1,true,false,0]"),
        ("\x7f\u2028\U0001f600", '"\x7f\u2028\U0001f600"'),
        ("\x00\x08\x1f", '"\\u0000\\b\\u001f"'),
        ("\ud83d\ude00", '"\U0001f600"'),
        ("a\ud800b\udfff", '"a\\ud800b\\udfff"'),
        ({"\uff61": 1, "\U0001f600": 2, "": 3}, '{"":3,"\U0001f600":2,"\uff61":1}'),
    ],
)
def test_canonical_details(value: Any, expected: str) -> None:
    assert canonical_interrupt_json(value) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (float("-inf"), "Interrupt values must be JSON-compatible."),
        (10**400, "Interrupt values must be JSON-compatible."),
        ((1, 2), "Interrupt values must use plain JSON objects."),
        ({1, 2}, "Interrupt values must use plain JSON objects."),
        (b"bytes", "Interrupt values must use plain JSON objects."),
        ({1: "int key"}, "Interrupt values must use plain JSON objects."),
    ],
)
def test_canonical_rejects(value: Any, message: str) -> None:
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        canonical_interrupt_json(value)


def test_canonical_rejects_cycles_but_not_shared_values() -> None:
    cyclic: list[Any] = [1]
    cyclic.append({"back": cyclic})
    with pytest.raises(TypeError, match=r"^Interrupt values must not cycle\.$"):
        canonical_interrupt_json(cyclic)
    shared = {"x": [1]}
    assert canonical_interrupt_json([shared, shared]) == '[{"x":[1]},{"x":[1]}]'


def test_digest_requires_text() -> None:
    with pytest.raises(TypeError, match=r"^Interrupt digests require canonical JSON text\.$"):
        digest_interrupt_json(b"{}")  # type: ignore[arg-type]  # the wrong type is the test


# --------------------------------------------------------------------------
# Bindings.
# --------------------------------------------------------------------------


def test_generic_binding_omits_absent_fields() -> None:
    assert generic_binding("i-1", "run-1", None, None) == {
        "v": 1,
        "kind": "generic",
        "interruptId": "i-1",
        "interruptedRunId": "run-1",
        "generation": 0,
    }
    full = generic_binding("i-1", "run-1", SCHEMA, "2030-01-01T00:00:00.000Z")
    assert list(full) == [
        "v",
        "kind",
        "interruptId",
        "interruptedRunId",
        "generation",
        "responseSchemaHash",
        "expiresAt",
    ]
    assert full["responseSchemaHash"] == SCHEMA_DIGEST
    assert full["expiresAt"] == "2030-01-01T00:00:00.000Z"


@pytest.mark.parametrize(("interrupt_id", "run_id"), [("", "run-1"), ("i-1", "")])
def test_generic_binding_requires_ids(interrupt_id: str, run_id: str) -> None:
    with pytest.raises(ValueError, match="non-empty string"):
        generic_binding(interrupt_id, run_id, None, None)


def test_bind_interrupt_keeps_metadata_and_input() -> None:
    interrupt = {
        "id": "ask-1",
        "reason": "confirmation",
        "toolCallId": "call-9",
        "expiresAt": "2030-01-01T00:00:00.000Z",
        "responseSchema": SCHEMA,
        "metadata": {"app": {"step": 2}, BINDING_METADATA_KEY: {"v": 99}},
    }
    original = copy.deepcopy(interrupt)
    bound = bind_interrupt(interrupt, "run-7")
    assert interrupt == original
    assert bound["metadata"]["app"] == {"step": 2}
    assert bound["metadata"][BINDING_METADATA_KEY] == {
        "v": 1,
        "kind": "generic",
        "interruptId": "ask-1",
        "interruptedRunId": "run-7",
        "generation": 0,
        "responseSchemaHash": SCHEMA_DIGEST,
        "expiresAt": "2030-01-01T00:00:00.000Z",
    }
    assert {k: v for k, v in bound.items() if k != "metadata"} == {
        k: v for k, v in original.items() if k != "metadata"
    }
    bound["responseSchema"]["type"] = "mutated"
    assert interrupt == original


def test_bind_interrupt_without_metadata() -> None:
    bound = bind_interrupt({"id": "a", "reason": "input_required"}, "run-1")
    assert bound["metadata"] == {BINDING_METADATA_KEY: generic_binding("a", "run-1", None, None)}


@pytest.mark.parametrize("key", ["responseSchema", "expiresAt"])
def test_bind_interrupt_refuses_null_fields(key: str) -> None:
    with pytest.raises(ValueError, match="omitted, not null"):
        bind_interrupt({"id": "a", "reason": "r", key: None}, "run-1")


def test_with_interrupt_binding_forces_version_and_id() -> None:
    bound = with_interrupt_binding(
        {"id": "real", "reason": "r"}, {"v": 2, "kind": "generic", "interruptId": "other"}
    )
    assert bound["metadata"][BINDING_METADATA_KEY] == {
        "v": 1,
        "kind": "generic",
        "interruptId": "real",
    }
    with pytest.raises(TypeError, match="metadata must be an object"):
        with_interrupt_binding({"id": "a", "reason": "r", "metadata": []}, {})


# --------------------------------------------------------------------------
# Generated values, checked against the real library through Node.
# --------------------------------------------------------------------------

_CHAR_POOLS: tuple[tuple[int, int], ...] = (
    (0x20, 0x7E),  # printable ASCII incl. " and \
    (0x00, 0x1F),  # control characters
    (0x7F, 0x2FF),  # DEL, Latin-1, Latin extended
    (0x2028, 0x2029),  # JS line/paragraph separators
    (0x0800, 0xD7FF),  # rest of the BMP below the surrogates
    (0xD800, 0xDFFF),  # lone surrogates
    (0xE000, 0xFFFF),  # private use .. specials: sort after astral in UTF-16
    (0x10000, 0x10FFFF),  # astral (surrogate pairs in JS)
)
_SPECIAL_KEYS = ("", "__proto__", "constructor", "0", "10", "9", "\U0001f600", "\uff61")


def _random_string(rng: random.Random) -> str:
    chars = []
    for _ in range(rng.randint(0, 8)):
        low, high = rng.choice(_CHAR_POOLS)
        chars.append(chr(rng.randint(low, high)))
    if rng.random() < 0.05:
        chars.append("\ud83d\ude00")  # a surrogate pair written as two code points
    return "".join(chars)


def _random_double(rng: random.Random) -> float:
    while True:
        (value,) = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))
        if value == value and abs(value) != float("inf"):
            return value


def _random_number(rng: random.Random) -> int | float:
    choice = rng.randrange(9)
    if choice == 0:
        return rng.randint(-1000, 1000)
    if choice == 1:
        return rng.choice([1, -1]) * (2**53 + rng.randint(-3, 2**20)) * 2 ** rng.randint(0, 20)
    if choice == 2:
        return rng.uniform(-1, 1) * 10.0 ** rng.randint(-30, 30)
    if choice == 3:
        return rng.choice([1e21, 1e-7, 1e-6, 1e20, 999999999999999999999.0, 0.1, -0.0, 0.0])
    if choice == 4:
        return rng.getrandbits(52) * 5e-324  # subnormal
    if choice == 5:
        return round(rng.uniform(-1e6, 1e6), rng.randint(0, 8))
    if choice == 6:
        return float(rng.randint(-(2**63), 2**63))
    return _random_double(rng)


def _random_scalar(rng: random.Random) -> Any:
    kind = rng.randrange(6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind in (2, 3):
        return _random_string(rng)
    return _random_number(rng)


def _random_key(rng: random.Random) -> str:
    return rng.choice(_SPECIAL_KEYS) if rng.random() < 0.2 else _random_string(rng)


def _random_object(rng: random.Random, size: int, depth: int) -> dict[str, Any]:
    """Distinct keys, also as JS strings: a split surrogate pair equals its astral char."""
    record: dict[str, Any] = {}
    seen: set[bytes] = set()
    for _ in range(size):
        key = _random_key(rng)
        utf16 = key.encode("utf-16-be", "surrogatepass")
        if utf16 not in seen:
            seen.add(utf16)
            record[key] = _random_value(rng, depth + 1)
    return record


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    if depth >= 4 or rng.random() < 0.3:
        return _random_scalar(rng)
    size = rng.randint(0, 6)
    if rng.random() < 0.5:
        return [_random_value(rng, depth + 1) for _ in range(size)]
    return _random_object(rng, size, depth)


def _run_node(inputs: list[Any], *args: str) -> list[Any]:
    if shutil.which("node") is None:
        pytest.skip("node is not on PATH")
    if not (NODE_DIR / "node_modules" / "@tanstack" / "ai").is_dir():
        pytest.skip("tests/node/node_modules/@tanstack/ai missing: run `npm install` in tests/node")
    result = subprocess.run(
        ["node", str(NODE_SCRIPT), *args],
        input=json.dumps(inputs),
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=NODE_DIR,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    outputs = json.loads(result.stdout)
    assert len(outputs) == len(inputs)
    return outputs


def _python_result(value: Any) -> dict[str, str]:
    try:
        canonical = canonical_interrupt_json(value)
    except TypeError as error:
        return {"error": f"TypeError: {error}"}
    return {"canonical": canonical, "digest": digest_interrupt_json(canonical)}


def test_generated_values_match_library() -> None:
    rng = random.Random(20240611)
    values = [_random_value(rng) for _ in range(400)]
    values += [_random_number(rng) for _ in range(200)]
    values += [_random_object(rng, 8, 3) for _ in range(50)]
    values += [10**400, [1, -(10**400)], SCHEMA]  # JSON.parse turns these into Infinity
    node = _run_node(values)
    mismatches = [
        (value, ours, theirs)
        for value, ours, theirs in zip(values, map(_python_result, values), node, strict=True)
        if ours != theirs
    ]
    assert not mismatches, f"{len(mismatches)} mismatches, first: {mismatches[:3]!r}"
    assert sum("canonical" in result for result in node) == len(values) - 2


def test_bound_interrupts_read_by_library() -> None:
    interrupts = [
        bind_interrupt({"id": "a", "reason": "input_required"}, "run-1"),
        bind_interrupt(
            {
                "id": "b",
                "reason": "confirmation",
                "message": "Sure?",
                "responseSchema": SCHEMA,
                "expiresAt": "2030-01-01T00:00:00.000Z",
                "metadata": {"other": True},
            },
            "run-2",
        ),
        bind_interrupt(VECTORS["exampleBoundDescriptor"], "run-42"),
    ]
    read = _run_node(interrupts, "read-binding")
    assert read == [interrupt["metadata"][BINDING_METADATA_KEY] for interrupt in interrupts]
