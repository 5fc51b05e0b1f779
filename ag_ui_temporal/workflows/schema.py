"""JSON Schema 2020-12 validation of interrupt payloads, with format checks.

Pure and deterministic: no remote `$ref` is ever fetched (the registry holds
only the meta-schemas and cannot retrieve), so it is safe inside workflow code.
Schemas come from producers, so neither function ever raises on a bad one.

Schemas and payloads are untrusted text, so no check may take more than linear time:
`pattern`/`patternProperties` (and the `regex` format) run on RE2, which has no
backtracking; a pattern RE2 cannot run (backreferences, lookaround) makes the schema
invalid; format checks refuse strings over `MAX_FORMAT_LENGTH`; `iri` drops its
(slow, Earley-parsed) checker for the RFC 3986 one on an ASCII stand-in.
"""

from __future__ import annotations

import functools
import json
import types
from collections.abc import Callable
from typing import Any, Final, TypeVar

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    import re

    import re2
    from jsonschema import Draft202012Validator, FormatChecker, validators
    from jsonschema import _keywords as keywords
    from jsonschema import _utils as schema_utils
    from jsonschema.exceptions import SchemaError, best_match
    from jsonschema_specifications import REGISTRY as META_SCHEMAS
    from rfc3986_validator import validate_rfc3986

INVALID_RESPONSE_SCHEMA = "INVALID_RESPONSE_SCHEMA"
"""`ApplicationError.type` when a producer offers an interrupt with an unusable schema."""


MAX_FORMAT_LENGTH: Final = 4096
"""Longer strings fail every `format`. Twice the common 2,048-character URL limit and far
above what the other formats allow (an email address is at most 254, a hostname 253);
at this length the slowest checker left (`uri-template`, quadratic) takes under 10 ms."""


def schema_problem(schema: Any) -> str | None:
    """Why `schema` is not a valid 2020-12 schema (or uses a pattern RE2 cannot run), or None."""
    return _memo(_CHECKED, schema, _check)


def _check(schema: Any) -> str | None:
    try:
        LinearValidator.check_schema(schema, format_checker=LINEAR_FORMATS)
    except SchemaError as err:
        return f"invalid responseSchema: {err.message}"
    except Exception as err:  # e.g. RecursionError on an absurdly deep schema
        return f"invalid responseSchema: {type(err).__name__}"
    return None


def payload_problem(schema: Any, payload: Any) -> str | None:
    """Why `payload` does not satisfy `schema`, or None.

    A schema the validator cannot apply (a dangling `$ref`, a `$ref` cycle, a
    type that is not a type, ...) refuses every payload with a problem string:
    the interrupt can still be cancelled, and the run never crashes.
    """
    try:
        validator = _memo(_VALIDATORS, schema, _linear_validator)
        error = best_match(validator.iter_errors(payload))
    except Exception as err:  # whatever the library raises on a broken schema
        return schema_problem(schema) or f"responseSchema cannot be applied: {type(err).__name__}"
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    return f"{where or 'payload'}: {error.message}"


def _linear_validator(schema: Any) -> Draft202012Validator:
    return LinearValidator(schema, format_checker=LINEAR_FORMATS, registry=META_SCHEMAS)


# -- RE2 in place of `re` ------------------------------------------------------------------

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a refused pattern is an answer, not a log line


@functools.lru_cache(maxsize=256)
def _re2(pattern: str) -> re2._Regexp:
    return re2.compile(_ESCAPE.sub(_ecma_escape, pattern), options=_RE2_OPTIONS)


# Each backslash escape, left to right (so in `\\u0041` an escaped backslash precedes "u0041").
_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|.)", flags=re.DOTALL)


def _ecma_escape(escape: re.Match[str]) -> str:
    r"""ECMA-262's (and Python's) `\uXXXX` is RE2's `\x{XXXX}`; other escapes are kept."""
    code = escape[1]
    return f"\\x{{{code[1:]}}}" if len(code) == 5 else escape[0]


class _LinearRe:
    """The one `re` function jsonschema's keywords call, on RE2 (raises `re2.error`)."""

    @staticmethod
    def search(pattern: str, text: str) -> re2._Match | None:
        return _re2(pattern).search(text)


def _on_re2(function: Callable[..., Any], **names: Any) -> Callable[..., Any]:
    """`function` (a jsonschema keyword or helper) reading `re` (and `names`) from our globals.

    The library's own code, so every keyword keeps its exact semantics and messages; only
    the regex engine changes. tests/workflows/test_untrusted_text.py proves each path linear."""
    namespace = {**function.__globals__, "re": _LinearRe, **names}
    clone = types.FunctionType(
        function.__code__, namespace, function.__name__, function.__defaults__
    )
    namespace[function.__name__] = clone  # recursion reaches the clone
    return clone


_evaluated_keys = _on_re2(schema_utils.find_evaluated_property_keys_by_schema)
_additional = _on_re2(schema_utils.find_additional_properties)
# types-jsonschema leaves `extend` unannotated; it returns a class like the one it extends.
_extend: Callable[..., type[Draft202012Validator]] = validators.extend
LinearValidator = _extend(
    Draft202012Validator,
    {
        "pattern": _on_re2(keywords.pattern),
        "patternProperties": _on_re2(keywords.patternProperties),
        "additionalProperties": _on_re2(
            keywords.additionalProperties, find_additional_properties=_additional
        ),
        "unevaluatedProperties": _on_re2(
            keywords.unevaluatedProperties, find_evaluated_property_keys_by_schema=_evaluated_keys
        ),
    },
)
"""Draft 2020-12 with `pattern` and every use of `patternProperties` on RE2."""


# -- formats ---------------------------------------------------------------------------------

# RFC 3987 allows `ucschar` wherever RFC 3986 allows `unreserved`, and `iprivate` in the
# query only: '~' is unreserved but never in a scheme or port, so with it standing in for
# them the (linear) RFC 3986 checker judges an IRI. Unlike rfc3987-syntax (0.5 ms a
# character), this accepts the RFC's astral `ucschar` (U+10000) and IPv6 literals; it is
# lenient on `ucschar` in an IPvFuture literal.
_UCSCHAR = re.compile(
    "[\xa0-\ud7ff\uf900-\ufdcf\ufdf0-\uffef"
    + "".join(f"{chr(plane << 16)}-{chr((plane << 16) | 0xFFFD)}" for plane in range(1, 14))
    + "\U000e1000-\U000efffd]"
)
_IPRIVATE = re.compile("[\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd]")


def _iri_checker(rule: str) -> Callable[[object], bool]:
    def is_iri(instance: object) -> bool:
        if not isinstance(instance, str):
            return True
        stand_in = _UCSCHAR.sub("~", instance)
        before, hash_, fragment = stand_in.partition("#")
        path, question, query = before.partition("?")
        stand_in = path + question + _IPRIVATE.sub("~", query) + hash_ + fragment
        # the RFC 3986 checker's `$` would also accept a final newline
        if not stand_in.isascii() or "\n" in stand_in:
            return False
        return bool(validate_rfc3986(stand_in, rule))

    return is_iri


def _is_re2_regex(instance: object) -> bool:
    return not isinstance(instance, str) or bool(_re2(instance))


def _bounded(check: Callable[[object], Any]) -> Callable[[object], Any]:
    def bounded(instance: object) -> Any:
        return not (isinstance(instance, str) and len(instance) > MAX_FORMAT_LENGTH) and check(
            instance
        )

    return bounded


def _linear_formats() -> FormatChecker:
    checks = dict(Draft202012Validator.FORMAT_CHECKER.checkers)
    checks["regex"] = (_is_re2_regex, re2.error)
    checks["iri"] = (_iri_checker("URI"), ValueError)
    checks["iri-reference"] = (_iri_checker("URI_reference"), ValueError)
    checker = FormatChecker(())
    for name, (check, raises) in checks.items():
        checker.checks(name, raises)(_bounded(check))
    return checker


LINEAR_FORMATS: Final = _linear_formats()


# Checking a schema against the meta-schema costs milliseconds, and the same few schemas
# come back again and again (every tool approval, every resume), so checks and validators
# (immutable) are cached by the schema's JSON text. The worker passes this module through
# the sandbox, so the caches outlive one workflow; caching a pure function decides nothing.
_CHECKED: dict[str, str | None] = {}
_VALIDATORS: dict[str, Draft202012Validator] = {}
_CACHE_MAX = 512
T = TypeVar("T")


def _memo(cache: dict[str, T], schema: Any, compute: Callable[[Any], T]) -> T:
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError, RecursionError):  # not JSON text: nothing to key by
        return compute(schema)
    if key not in cache:
        if len(cache) >= _CACHE_MAX:
            cache.clear()
        cache[key] = compute(schema)
    return cache[key]
