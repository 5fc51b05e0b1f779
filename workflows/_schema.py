"""JSON Schema 2020-12 validation of interrupt payloads, with format checks.

Pure and deterministic: no remote `$ref` is ever fetched (the `referencing`
registry is empty), so it is safe inside workflow code.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError, best_match


def schema_problem(schema: dict[str, Any]) -> str | None:
    """Why `schema` is not a valid 2020-12 schema, or None."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as err:
        return f"invalid responseSchema: {err.message}"
    return None


def payload_problem(schema: dict[str, Any], payload: Any) -> str | None:
    """Why `payload` does not satisfy `schema`, or None."""
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    error = best_match(validator.iter_errors(payload))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    return f"{where or 'payload'}: {error.message}"
