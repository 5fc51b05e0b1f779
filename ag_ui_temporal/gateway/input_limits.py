"""The parsed `RunAgentInput` against the limits, before any stream: the AG-UI route answers
`422` with the first problem's message, which names the limit (counts, sizes, string
lengths, nesting, resume metadata that is null or has reserved keys, ids in bytes, run ids
the server keeps for its own runs, numbers JSON has not)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from ag_ui.core import ResumeEntry, RunAgentInput

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import (
    MAX_MESSAGE_BYTES,
    MAX_RUN_MESSAGES_BYTES,
    reserved_metadata_keys,
    server_run_id,
)
from ag_ui_temporal.workflows.contract.names import (
    INDEXED_RUNS,
    MAX_RUN_ID_BYTES,
    SEARCH_ATTRIBUTE_BYTES,
    indexed_size,
)


def input_problem(body: RunAgentInput, settings: Settings) -> str | None:
    """What in `body` is over a limit (naming the limit), or None."""
    for problem in _problems(body, settings):
        return problem
    return None


def _problems(body: RunAgentInput, s: Settings) -> Iterator[str]:
    resume = body.resume or []
    if len(body.messages) > s.max_messages:
        yield f"{len(body.messages)} messages; at most {s.max_messages} (MAX_MESSAGES)"
    if len(resume) > s.max_resume_entries:
        yield f"{len(resume)} resume entries; at most {s.max_resume_entries} (MAX_RESUME_ENTRIES)"
    for i, entry in enumerate(resume):
        if metadata_null(entry):
            yield f"resume[{i}].metadata: {METADATA_NULL} (INVALID_RESUME)"
        for key in reserved_metadata_keys(entry.metadata):
            yield f"resume[{i}].metadata: key {key[:64]!r} is reserved (the ag-ui namespace)"
    yield from _id_problems(body, s)
    yield from _message_problems(body)
    yield from _size_problems(body, s)
    yield from _json_text_problems(body)
    # Python's values, not JSON's: a JSON dump would have made NaN and Infinity null
    yield from _shape_problems(body.model_dump(by_alias=True), s)


METADATA_NULL = "null; omit it or send an object"
"""AG-UI's `ResumeEntry.metadata` is absent or an object, never null (`@ag-ui/core` refuses a
null; pydantic would read it as absent, so the entry would pass for one without metadata)."""


def metadata_null(entry: ResumeEntry) -> bool:
    """Whether the client sent `"metadata": null` (not the same as leaving it out)."""
    return entry.metadata is None and "metadata" in entry.model_fields_set


def id_problem(value: str, s: Settings) -> str | None:
    """What makes `value` no id (the one rule, in bytes: Temporal counts ids in bytes), or None."""
    if len(value.encode()) > s.max_id_length:
        return f"over {s.max_id_length} bytes of UTF-8 (MAX_ID_LENGTH)"
    return None


RESERVED_RUN_ID = (
    "reserved for the server's own runs (`decision-…`, `run-` and 16 hex digits); choose "
    "another id (e.g. a UUID)"
)
"""A run id the server makes (`contract.server_run_id`): a client's run under it would be
answered in place of the server's (a decision's, or the thread's own)."""


def _id_problems(body: RunAgentInput, s: Settings) -> Iterator[str]:
    ids = {"threadId": body.thread_id, "runId": body.run_id, "parentRunId": body.parent_run_id}
    ids |= {f"messages[{i}].id": m.id for i, m in enumerate(body.messages)}
    ids |= {f"resume[{i}].interruptId": e.interrupt_id for i, e in enumerate(body.resume or [])}
    for where, value in ids.items():
        if value is not None and (problem := id_problem(value, s)) is not None:
            yield f"{where}: {problem}"
    if server_run_id(body.run_id):
        yield f"runId: {RESERVED_RUN_ID}"
    if indexed_size(body.run_id) > MAX_RUN_ID_BYTES:
        yield (
            f"runId: over {MAX_RUN_ID_BYTES} bytes as JSON (non-ASCII escaped): a thread's last "
            f"{INDEXED_RUNS} run ids share one search attribute of {SEARCH_ATTRIBUTE_BYTES} bytes"
        )


def _message_problems(body: RunAgentInput) -> Iterator[str]:
    """User messages the thread could not store (`workflows.contract.transcript`)."""
    sizes = {
        i: _json_size(m.model_dump(mode="json", by_alias=True, exclude_none=True))
        for i, m in enumerate(body.messages)
        if m.role == "user"
    }
    for i, size in sizes.items():
        if size > MAX_MESSAGE_BYTES:
            yield f"messages[{i}]: over {MAX_MESSAGE_BYTES} bytes of JSON (MAX_MESSAGE_BYTES)"
    if sum(sizes.values()) > MAX_RUN_MESSAGES_BYTES:
        yield f"user messages over {MAX_RUN_MESSAGES_BYTES} bytes of JSON (MAX_RUN_MESSAGES_BYTES)"


def _size_problems(body: RunAgentInput, s: Settings) -> Iterator[str]:
    """Free-form JSON the workflow stores: each piece bounded on its own."""
    sized = {"state": body.state, "forwardedProps": body.forwarded_props}
    for i, entry in enumerate(body.resume or []):
        sized |= {f"resume[{i}].payload": entry.payload, f"resume[{i}].metadata": entry.metadata}
    for where, value in sized.items():
        if value is not None and _json_size(value) > s.max_payload_bytes:
            yield f"{where}: over {s.max_payload_bytes} bytes of JSON (MAX_PAYLOAD_BYTES)"


def _json_size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


NOT_A_NUMBER = "NaN, Infinity or a number no double holds (1e400): JSON has no such number"


def _finite(number: float) -> bool:
    """Python's JSON takes `NaN` and `Infinity` and reads `1e400` as infinity; stored, they
    would turn into null (or into JSON no client parses)."""
    try:
        return math.isfinite(number)
    except OverflowError:  # an int beyond any double
        return False


class _NotFinite(Exception):
    pass


def _checked(number: float) -> float:
    if not _finite(number):
        raise _NotFinite
    return number


def _refused(constant: str) -> float:
    raise _NotFinite  # `NaN`, `Infinity`, `-Infinity`


def _json_text_problems(body: RunAgentInput) -> Iterator[str]:
    """JSON sent as text that agents and hydrate parse (tool results, tool calls' arguments),
    held to the rule on numbers the body's own JSON is held to."""
    texts: dict[str, str] = {}
    for i, message in enumerate(body.messages):
        if message.role == "tool" and isinstance(message.content, str):
            texts[f"messages[{i}].content"] = message.content
        if message.role == "assistant":
            for j, call in enumerate(message.tool_calls or []):
                texts[f"messages[{i}].toolCalls[{j}].function.arguments"] = call.function.arguments
    for where, text in texts.items():
        try:
            json.loads(
                text,
                parse_constant=_refused,
                parse_float=lambda digits: _checked(float(digits)),
                parse_int=lambda digits: _checked(int(digits)),
            )
        except _NotFinite:
            yield f"{where}: {NOT_A_NUMBER}"
        except (ValueError, RecursionError):  # not JSON: text like any other
            pass


def _shape_problems(value: Any, s: Settings) -> Iterator[str]:
    """Strings and keys too long, nesting too deep, numbers JSON cannot hold, anywhere
    (iterative: no recursion)."""
    stack: list[tuple[str, Any, int]] = [("", value, 0)]
    while stack:
        where, item, depth = stack.pop()
        if isinstance(item, str) and len(item) > s.max_string_length:
            yield f"{where}: a string over {s.max_string_length} characters (MAX_STRING_LENGTH)"
        if isinstance(item, float | int) and not _finite(item):
            yield f"{where}: {NOT_A_NUMBER}"
        if not isinstance(item, dict | list):
            continue
        if depth >= s.max_json_depth:
            yield f"{where}: nested deeper than {s.max_json_depth} levels (MAX_JSON_DEPTH)"
            continue
        children = item.items() if isinstance(item, dict) else enumerate(item)
        for key, child in children:
            if isinstance(key, str) and len(key) > s.max_string_length:
                yield f"{where}: a key over {s.max_string_length} characters (MAX_STRING_LENGTH)"
            path = f"{where}.{key[:64]}" if isinstance(key, str) else f"{where}[{key}]"
            stack.append((path.lstrip("."), child, depth + 1))
