"""Tool activities: the only place the demo agent's side effects happen.

Activities are synchronous (SQLite blocks), run on the worker's thread pool.
Temporal schedules each activity once per workflow decision, but retries it
after a crash or a timeout. Every effect is therefore written to an outbox
keyed by the tool call id, so a retried attempt finds the effect already done
and returns the same result: the effect happens once per key.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from temporalio import activity


class ToolCallInput(BaseModel):
    """One approved tool call to execute."""

    key: str
    """Idempotency key: the AG-UI `toolCallId`."""
    tool: str
    args: dict[str, Any]


class ToolCallOutput(BaseModel):
    result: dict[str, Any]
    first_time: bool
    """False when this key had already been executed (a retried or replayed attempt)."""


class Outbox:
    """A SQLite table of effects, one row per idempotency key."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        with self._connect() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS effects ("
                " key TEXT PRIMARY KEY, tool TEXT NOT NULL, args TEXT NOT NULL,"
                " result TEXT NOT NULL, at TEXT DEFAULT CURRENT_TIMESTAMP)"
            )

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30, isolation_level=None)

    def record(self, call: ToolCallInput, result: dict[str, Any]) -> ToolCallOutput:
        """Write the effect unless its key exists; return the stored result either way."""
        with self._connect() as db:
            inserted = db.execute(
                "INSERT OR IGNORE INTO effects (key, tool, args, result) VALUES (?, ?, ?, ?)",
                (call.key, call.tool, json.dumps(call.args), json.dumps(result)),
            ).rowcount
            (stored,) = db.execute(
                "SELECT result FROM effects WHERE key = ?", (call.key,)
            ).fetchone()
        return ToolCallOutput(result=json.loads(stored), first_time=bool(inserted))

    def effects(self, tool: str | None = None) -> list[dict[str, Any]]:
        """Every recorded effect, oldest first (for tests and operators)."""
        query = "SELECT key, tool, args FROM effects"
        params: tuple[str, ...] = ()
        if tool is not None:
            query, params = query + " WHERE tool = ?", (tool,)
        with self._connect() as db:
            rows = db.execute(query + " ORDER BY rowid", params).fetchall()
        return [{"key": key, "tool": name, "args": json.loads(args)} for key, name, args in rows]


class ToolActivities:
    """The demo tools. A real deployment swaps these for calls to real systems."""

    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox

    @activity.defn(name="sendEmail")
    def send_email(self, call: ToolCallInput) -> ToolCallOutput:
        result = {"sent": True, "to": call.args["to"], "subject": call.args["subject"]}
        return self.outbox.record(call, result)

    @activity.defn(name="fileQuarterlyReport")
    def file_quarterly_report(self, call: ToolCallInput) -> ToolCallOutput:
        args = call.args
        result = {"filed": True, "quarter": args["quarter"], "year": args["year"]}
        return self.outbox.record(call, result)
