"""`GET /audit`: the audit trail as the store keeps it, for whoever may read it.

Every record the workflows wrote (`workflows.contract.audit`) is read back from the store
(`store.audit.AuditLog`) and from nowhere else: no Temporal call, so the trail answers the
same after Temporal deleted the workflows it tells of. Who reads what is the store's
`Reader`: `AUDITORS` everything, `APPROVALS_ADMINS` every chain's records (the chains' own
and their seats' in inbox threads), everyone else the scopes that list them (a thread's
owner, a chain's participants, by name or `group:G`). A caller who may read nothing gets
an empty page, the answer of a filter nothing matches: what exists does not leak.

JSON pages by default (`limit`, `after`: the previous page's `next`); with
`Accept: application/x-ndjson`, every match streamed, one exported record a line, the
records' lines `ag-ui-temporal audit export` writes (which adds the anchor a pruned trail
starts at, for an import). The gateway holds no audit key: it reads, never writes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel

from ag_ui_temporal.gateway.access import TRUSTED_MODES
from ag_ui_temporal.gateway.auth import Principal
from ag_ui_temporal.gateway.deps import AuthenticatedRoute, PrincipalDep, SettingsDep
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.store.audit import (
    MAX_READ,
    AuditLog,
    AuditQuery,
    Reader,
    StoredRecord,
    ndjson_line,
)

router = APIRouter(tags=["audit"], route_class=AuthenticatedRoute)

NDJSON = "application/x-ndjson"
MAX_LIMIT = MAX_READ
"""Records one JSON page holds at most (NDJSON streams every match instead)."""
MAX_CURSOR = 2**63 - 1
"""The largest row id a cursor names (BIGINT): a larger one would reach the database as a
value it refuses (a 503), not as bad input."""
NO_NUL = r"^[^\x00]+$"
"""A filter value holds no NUL: PostgreSQL cannot keep one in text (it would refuse the
query, a 503), so no record could match it anyway."""
MAX_FILTER = 1000
"""No id is longer than Temporal's 1000 bytes, nor is a principal worth filtering by."""

FLUSH_BYTES = 64 * 1024
"""NDJSON lines sent in one write, at most about this much (not a write per record)."""


def _filter(name: str) -> Any:
    """A filter's query parameter, `name` on the wire."""
    return Query(alias=name, min_length=1, max_length=MAX_FILTER, pattern=NO_NUL)


class AuditPage(BaseModel):
    """`GET /audit` as JSON: one page of records, oldest first."""

    records: list[dict[str, Any]]
    """Each as the store exports it (`StoredRecord.exported`): scope, seq, key, kind, at,
    threadId, chainId, interruptId, runId, principal, data, prev, keyId, hash, recordedAt."""
    next: str | None = None
    """Pass as `after` for the next page; None when this page was not full (the last)."""


def reader_of(principal: Principal, settings: Settings) -> Reader:
    """The store's `Reader` for the caller: what the settings grant, and their groups."""
    return Reader(
        principal=principal.name,
        groups=tuple(principal.groups),
        everything=(settings.auth_mode in TRUSTED_MODES or principal.named_in(settings.auditors)),
        chains=principal.named_in(settings.approvals_admins),
    )


def parse_since(since: str | None) -> datetime | None:
    """`since` as an aware UTC time: ISO 8601 with an offset (`Z`, `+02:00`); anything
    else (no offset, not a time, out of range once in UTC) is a 422 like FastAPI's."""
    if since is None:
        return None
    try:
        parsed = datetime.fromisoformat(since)
        if parsed.tzinfo is not None and parsed.utcoffset() is not None:
            return parsed.astimezone(UTC)
    except (ValueError, OverflowError):  # OverflowError: year 1 at +14:00 is before year 1 UTC
        pass
    problem = "must be an ISO 8601 time with an offset, e.g. 2025-01-31T09:00:00Z"
    raise RequestValidationError(
        [{"type": "value_error", "loc": ("query", "since"), "msg": problem, "input": since}]
    )


def wants_ndjson(accept: str) -> bool:
    """Whether the `Accept` header asks for NDJSON (named, and not with `q=0`)."""
    for media_range in accept.split(","):
        kind, *params = (part.strip().lower() for part in media_range.split(";"))
        if kind == NDJSON and not any(p.replace(" ", "") in ("q=0", "q=0.0") for p in params):
            return True
    return False


@router.get(
    "/audit",
    response_model=AuditPage,
    responses={200: {"content": {NDJSON: {}}, "description": "A page, or every match as NDJSON"}},
)
async def get_audit(
    request: Request,
    principal: PrincipalDep,
    settings: SettingsDep,
    thread_id: Annotated[str | None, _filter("threadId")] = None,
    chain_id: Annotated[str | None, _filter("chainId")] = None,
    acted_by: Annotated[str | None, _filter("principal")] = None,
    since: Annotated[str | None, Query(max_length=64)] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 100,
    after: Annotated[int | None, Query(ge=0, le=MAX_CURSOR)] = None,
) -> Response:
    """Audit records the caller may read, oldest first: of a thread (`threadId`), of a
    chain and its seats (`chainId`), by who acted (`principal`), from a time on (`since`,
    ISO 8601 with an offset). JSON pages (`limit`, then `after` = the last page's `next`);
    with `Accept: application/x-ndjson`, every match from `after` on, streamed (`limit`
    does not apply)."""
    query = AuditQuery(
        thread_id=thread_id,
        chain_id=chain_id,
        principal=acted_by,
        since=parse_since(since),
        after=after,
        limit=limit,
    )
    reader = reader_of(principal, settings)
    log: AuditLog = request.app.state.audit
    if wants_ndjson(request.headers.get("accept", "")):
        return await _streamed(log, query, reader)
    records = await log.read(query, reader)
    page = AuditPage(
        records=[record.exported() for record in records],
        next=str(records[-1].id) if len(records) == limit else None,
    )
    # Serialized once, here: returned as a model, up to a thousand records' `data` would
    # be validated against `AuditPage` again on the way out.
    return Response(page.model_dump_json(), media_type="application/json")


async def _streamed(log: AuditLog, query: AuditQuery, reader: Reader) -> Response:
    """Every match as NDJSON. The first record is read before the answer starts, so a store
    that does not answer is the usual 503, not a 200 cut short."""
    records = aiter(log.stream(query, reader))
    try:
        first = await anext(records, None)
    except BaseException:
        await _close(records)
        raise
    if first is None:
        await _close(records)
        return Response(b"", media_type=NDJSON)
    return StreamingResponse(_lines(first, records), media_type=NDJSON)


async def _lines(first: StoredRecord, records: AsyncIterator[StoredRecord]) -> AsyncIterator[bytes]:
    try:
        chunk = [ndjson_line(first)]
        size = len(chunk[0])
        async for record in records:
            line = ndjson_line(record)
            chunk.append(line)
            size += len(line)
            if size >= FLUSH_BYTES:
                yield b"".join(chunk)
                chunk, size = [], 0
        if chunk:
            yield b"".join(chunk)
    finally:  # a client that hung up: the store's read (and its connection) ends here too
        await _close(records)


async def _close(records: AsyncIterator[StoredRecord]) -> None:
    close = getattr(records, "aclose", None)
    if close is not None:
        await close()
