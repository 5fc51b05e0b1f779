"""JSON Schema 2020-12 validation of interrupt payloads, with format checks.

Pure and deterministic: no remote `$ref` is ever fetched (the registry holds
only the meta-schemas and cannot retrieve), so it is safe inside workflow code.
Schemas come from producers, so neither function ever raises on a bad one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError, best_match
    from jsonschema_specifications import REGISTRY as META_SCHEMAS

INVALID_RESPONSE_SCHEMA = "INVALID_RESPONSE_SCHEMA"
"""`ApplicationError.type` when a producer offers an interrupt with an unusable schema."""


def schema_problem(schema: Any) -> str | None:
    """Why `schema` is not a valid 2020-12 schema, or None."""
    return _memo(_CHECKED, schema, _check)


def _check(schema: Any) -> str | None:
    try:
        Draft202012Validator.check_schema(schema)
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
        validator = _memo(_VALIDATORS, schema, _validator)
        error = best_match(validator.iter_errors(payload))
    except Exception as err:  # whatever the library raises on a broken schema
        return schema_problem(schema) or f"responseSchema cannot be applied: {type(err).__name__}"
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    return f"{where or 'payload'}: {error.message}"


def _validator(schema: Any) -> Draft202012Validator:
    return Draft202012Validator(
        schema, format_checker=Draft202012Validator.FORMAT_CHECKER, registry=META_SCHEMAS
    )


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


def require_valid_schema(schema: Any) -> None:
    """Refuse to open an interrupt whose `responseSchema` no answer could satisfy reliably.

    Raised where the interrupt is created (the producer's own workflow), so the
    mistake surfaces there, not as a thread whose interrupt can never be resolved.
    """
    problem = schema_problem(schema)
    if problem is not None:
        raise ApplicationError(problem, type=INVALID_RESPONSE_SCHEMA, non_retryable=True)
