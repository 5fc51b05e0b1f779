"""`ag-ui-temporal audit verify|heads|export|import|prune|keygen`: the store's audit trail
from a terminal.

`verify` checks every anchor and every scope's hash chain under the audit key (exit 1 naming
the first record that does not match), and with `--heads FILE` that no scope lost what an
earlier `heads` export (each scope's end, signed) names; `export` writes NDJSON (every
record, or a thread's, a chain's, since a time), `import` reads such a file into this store,
`prune` drops what `AUDIT_RETENTION` no longer keeps, `keygen` makes a key. The database is
`DATABASE_URL`, else SQLite under `DATA_DIR`, as for `migrate`; the key is `AUDIT_KEY` (or
`AUDIT_KEY_FILE`, or the development key beside the SQLite store), as the worker's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ag_ui_temporal.settings import Settings

if TYPE_CHECKING:  # the store (SQLAlchemy) loads when a command runs, not for `--help`
    from ag_ui_temporal.store import AuditLog


def add_command(commands: Any) -> None:
    audit = commands.add_parser(
        "audit", help="verify, export, import or prune the audit trail, or anchor its heads"
    )
    sub = audit.add_subparsers(dest="action", required=True)
    verify = sub.add_parser(
        "verify", help="check every record's keyed hash chain; exit 1 naming the first broken"
    )
    verify.add_argument(
        "--heads", type=Path, help="and that no scope lost what this `audit heads` export names"
    )
    verify.add_argument(
        "--allow-unkeyed",
        action="store_true",
        help="accept (and count) records written before the trail had a key",
    )
    heads = sub.add_parser("heads", help="write each scope's end, signed, to keep elsewhere")
    heads.add_argument("-o", "--output", type=Path, help="the file to write (default: stdout)")
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
    keygen = sub.add_parser("keygen", help="make a new audit key (AUDIT_KEY)")
    keygen.add_argument(
        "-o", "--output", type=Path, help="a new file to write it to (kept if it exists)"
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
    """The action's exit code: 0 done, 1 a broken trail or a refused import, 2 no key."""
    from ag_ui_temporal.store import (
        AuditHeads,
        AuditKeyMissing,
        AuditLog,
        AuditQuery,
        audit_keys,
        open_engine,
    )

    if args.action == "keygen":
        return keygen(args.output)
    keys = None
    if args.action != "export":
        try:
            keys = audit_keys(settings)
        except AuditKeyMissing as missing:
            print(f"ag-ui-temporal audit: {missing}", file=sys.stderr)
            return 2
    log = AuditLog(open_engine(settings.store_url), keys)
    try:
        if args.action == "verify":
            return await verify(log, args.heads, args.allow_unkeyed)
        if args.action == "heads":
            lines, _ = await write(AuditHeads(log.engine, log.keys).write(), args.output)
            print(f"{lines - 1} heads exported, signed", file=sys.stderr)
            return 0
        if args.action == "export":
            query = AuditQuery(thread_id=args.thread, chain_id=args.chain, since=args.since)
            lines, anchors = await write(log.export(query), args.output)
            also = f" and {anchors} anchors of pruned trails" if anchors else ""
            print(f"{lines - anchors} records{also} exported", file=sys.stderr)
            return 0
        if args.action == "import":
            return await load(log, args.file)
        return await prune(log, settings, args.before)
    finally:
        await log.engine.dispose()


def keygen(output: Path | None) -> int:
    from ag_ui_temporal.store.audit_keys import new_key, write_key_file

    key = new_key()
    if output is None:
        print(key)
        return 0
    try:
        write_key_file(output, key)
    except FileExistsError:
        print(f"{output} exists: kept as it is", file=sys.stderr)
        return 0
    print(f"a new audit key in {output} (AUDIT_KEY_FILE={output})", file=sys.stderr)
    return 0


async def verify(log: AuditLog, heads: Path | None, allow_unkeyed: bool) -> int:
    from ag_ui_temporal.store import AuditHeads, HeadsError

    checked, broken, anchors, unkeyed = await log.verify(allow_unkeyed=allow_unkeyed)
    if broken is not None:
        print(f"the audit trail is broken at {broken} ({checked} records read)", file=sys.stderr)
        return 1
    said = f"{checked} records verified"
    if anchors:
        said += f", from {anchors} anchors"
    if unkeyed:
        said += f" ({unkeyed} unkeyed: written before the trail had a key, vouched for by none)"
    if heads is not None:
        try:
            with heads.open("rb") as lines:
                count, lost = await AuditHeads(log.engine, log.keys).verify(lines)
        except (OSError, HeadsError) as bad:
            print(f"{heads}: {bad}", file=sys.stderr)
            return 1
        if lost is not None:
            print(f"the audit trail lost records: {lost}", file=sys.stderr)
            return 1
        said += f"; each of the {count} scopes in {heads} reaches its head"
    print(said)
    return 0


async def write(lines: AsyncIterator[bytes], output: Path | None) -> tuple[int, int]:
    """`lines` to `output` (stdout if None); how many, and how many were anchors."""
    if output is None:
        sys.stdout.flush()  # the lines go to its bytes underneath
        return await _write(lines, sys.stdout.buffer)
    # Written aside and moved in place: a failed export leaves no half file behind.
    partial = output.with_name(f"{output.name}.partial")
    with partial.open("wb") as out:
        counts = await _write(lines, out)
    os.replace(partial, output)
    return counts


async def _write(lines: AsyncIterator[bytes], out: IO[bytes]) -> tuple[int, int]:
    count = anchors = 0
    async for line in lines:
        out.write(line)
        count += 1
        anchors += line.startswith(b'{"anchor":')
    out.flush()
    return count, anchors


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
