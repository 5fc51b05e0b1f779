"""`ag-ui-temporal audit verify|export|import|prune`: the store's audit trail from a terminal.

`verify` checks every scope's hash chain (exit 1 naming the first record that does not
match), `export` writes NDJSON (every record, or a thread's, a chain's, since a time),
`import` reads such a file into this store, `prune` drops what `AUDIT_RETENTION` no longer
keeps. The database is `DATABASE_URL`, else SQLite under `DATA_DIR`, as for `migrate`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ag_ui_temporal.settings import Settings

if TYPE_CHECKING:  # the store (SQLAlchemy) loads when a command runs, not for `--help`
    from ag_ui_temporal.store import AuditLog, AuditQuery


def add_command(commands: Any) -> None:
    audit = commands.add_parser("audit", help="verify, export, import or prune the audit trail")
    sub = audit.add_subparsers(dest="action", required=True)
    sub.add_parser("verify", help="check every record's hash chain; exit 1 naming the first broken")
    export = sub.add_parser("export", help="write the records as NDJSON (stdout or a file)")
    export.add_argument("--thread", help="only this thread's records")
    export.add_argument("--chain", help="only this chain's records (its own and its seats')")
    export.add_argument("--since", type=instant, help="only records from this time on (ISO 8601)")
    export.add_argument("-o", "--output", type=Path, help="the file to write (default: stdout)")
    load = sub.add_parser("import", help="store an export's records (NDJSON) in this database")
    load.add_argument("file", type=Path)
    prune = sub.add_parser("prune", help="drop records older than AUDIT_RETENTION")
    prune.add_argument(
        "--before", type=instant, help="drop records stored before this time (ISO 8601)"
    )


def instant(text: str) -> datetime:
    """An ISO 8601 time with its offset (`2026-12-01T00:00:00Z`): no guessing a time zone."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}") from None
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} needs an offset (Z, +02:00)")
    return moment


async def run(settings: Settings, args: argparse.Namespace) -> int:
    """The action's exit code: 0 done, 1 a broken trail or a refused import."""
    from ag_ui_temporal.store import AuditLog, AuditQuery, open_engine

    log = AuditLog(open_engine(settings.store_url))
    try:
        if args.action == "verify":
            return await verify(log)
        if args.action == "export":
            query = AuditQuery(thread_id=args.thread, chain_id=args.chain, since=args.since)
            return await export(log, query, args.output)
        if args.action == "import":
            return await load(log, args.file)
        return await prune(log, settings, args.before)
    finally:
        await log.engine.dispose()


async def verify(log: AuditLog) -> int:
    checked, broken = await log.verify()
    if broken is not None:
        print(f"the audit trail is broken at {broken} ({checked} records read)", file=sys.stderr)
        return 1
    print(f"{checked} records verified")
    return 0


async def export(log: AuditLog, query: AuditQuery, output: Path | None) -> int:
    if output is None:
        sys.stdout.flush()  # the lines go to its bytes underneath
        count = await _write(log, query, sys.stdout.buffer)
    else:
        # Written aside and moved in place: a failed export leaves no half file behind.
        partial = output.with_name(f"{output.name}.partial")
        with partial.open("wb") as out:
            count = await _write(log, query, out)
        os.replace(partial, output)
    print(f"{count} records exported", file=sys.stderr)
    return 0


async def _write(log: AuditLog, query: AuditQuery, out: IO[bytes]) -> int:
    from ag_ui_temporal.store import Reader, ndjson_line

    everything = Reader(principal="", everything=True)  # who runs this has the database
    count = 0
    async for record in log.stream(query, everything):
        out.write(ndjson_line(record))
        count += 1
    out.flush()
    return count


async def load(log: AuditLog, path: Path) -> int:
    from ag_ui_temporal.store import AuditImportError

    with path.open(encoding="utf-8") as lines:
        try:
            count = await log.import_records(_records(lines))
        except AuditImportError as refused:
            print(f"{path}: {refused}; nothing was imported", file=sys.stderr)
            return 1
    print(f"{count} records imported")
    return 0


def _records(lines: IO[str]) -> Iterator[dict[str, Any]]:
    """An NDJSON file's objects, read as the import consumes them. Blank lines may end the
    file (an editor's last newline); one between records is refused, so that a refusal's line
    number is the file's."""
    from ag_ui_temporal.store import AuditImportError

    blank = None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            blank = blank or number
            continue
        if blank is not None:
            raise AuditImportError(blank, "a blank line between records")
        try:
            yield json.loads(line)
        except json.JSONDecodeError as bad:
            raise AuditImportError(number, f"not JSON ({bad.msg})") from None


async def prune(log: AuditLog, settings: Settings, before: datetime | None) -> int:
    if before is None:
        if settings.audit_retention is None:
            print("AUDIT_RETENTION is not set: the trail is kept forever, nothing was dropped")
            return 0
        before = datetime.now(UTC) - settings.audit_retention
    dropped = await log.prune(before)
    print(f"{dropped} records stored before {before.isoformat()} dropped")
    return 0
