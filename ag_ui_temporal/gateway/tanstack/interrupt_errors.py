"""A refused resume's item-level errors where TanStack's client shows them.

`RUN_ERROR.metadata.tanstack.interruptErrors`, in TanStack's own codes, next to the
interrupt each is about; the item stays resolvable with its error shown.
"""

from __future__ import annotations

from ag_ui_temporal.workflows.contract import ErrorCode, InterruptError, WireDict

__all__ = ["TANSTACK_CODES", "interrupt_errors_metadata"]

TANSTACK_CODES: dict[ErrorCode, str] = {
    ErrorCode.UNKNOWN_INTERRUPT_ID: "unknown-interrupt",
    ErrorCode.INVALID_PAYLOAD: "invalid-payload",
    ErrorCode.INTERRUPT_EXPIRED: "expired",
    ErrorCode.INTERRUPT_ALREADY_RESOLVED: "conflict",
    ErrorCode.PARTIAL_RESUME: "incomplete-batch",
    ErrorCode.RESUME_REQUIRED: "incomplete-batch",
    ErrorCode.INTERRUPT_WITHDRAWN: "stale",
    ErrorCode.FORBIDDEN: "conflict",  # TanStack has no auth code: not yours to answer
    ErrorCode.INVALID_RESUME: "invalid-payload",  # an entry TanStack must not send (reserved keys)
    ErrorCode.LIMIT_EXCEEDED: "server",  # the server's limit, not the client's answer
}
"""AG-UI code -> TanStack `interruptErrors` code; codes missing here map to `protocol`."""


def interrupt_errors_metadata(
    thread_id: str, interrupted_run: str, errors: list[InterruptError]
) -> WireDict | None:
    """`RUN_ERROR.metadata` carrying `errors` for TanStack's client, or None for no errors."""
    items = [_tanstack_error(thread_id, interrupted_run, e) for e in errors]
    return {"tanstack": {"interruptErrors": items}} if items else None


def _tanstack_error(thread_id: str, interrupted_run: str, error: InterruptError) -> WireDict:
    code = TANSTACK_CODES.get(error.code, "protocol")
    item: WireDict = {
        "scope": error.scope,
        "threadId": thread_id,
        "interruptedRunId": interrupted_run,
        "generation": 0,
        "code": code,
        "message": error.message,
        "source": "server",
        "retryable": error.code
        not in (
            ErrorCode.INTERRUPT_EXPIRED,
            ErrorCode.INTERRUPT_WITHDRAWN,
            ErrorCode.FORBIDDEN,
            ErrorCode.LIMIT_EXCEEDED,
        ),
    }
    if error.scope == "item":
        item["interruptId"] = error.interrupt_id
    else:
        item["interruptIds"] = error.interrupt_ids or []
    return item
