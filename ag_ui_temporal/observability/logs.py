"""Structured logs: one JSON object a line (or text), request context on every record,
secrets redacted from the finished line whatever put them there (a message, an
exception, an `extra`). Access logs carry the path only, never the query string.

Redaction runs on every line, so it must never stall a process: lines are bounded
(`MAX_LINE` characters, cut with a marker) before redacting, and the patterns run on
RE2, whose matching time is linear in the text (no backtracking).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from datetime import UTC, datetime
from types import MappingProxyType
from typing import IO, Any, Literal

import re2
from pydantic import BaseModel, SecretStr
from pythonjsonlogger.json import JsonFormatter

LogFormat = Literal["json", "text"]

CONTEXT: ContextVar[Mapping[str, Any]] = ContextVar(
    "agui_log_context", default=MappingProxyType({})
)
"""thread_id, run_id, interrupt_ids, principal of the request being served (gateway)."""

REDACTED = "[REDACTED]"
MAX_LINE = 16_384
"""Longest line redacted and written (characters); longer ones are cut with a marker."""
_TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~+/=-"
_SENSITIVE = r"authorization|x-api-key|api[_-]?key|token|secret|password|jwt|credentials"
_PATTERNS = (
    # `Bearer <token>` / `Basic <credentials>` wherever they appear.
    re2.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+"),
    # Anything that looks like a JWT (three base64url parts, the first two JSON objects).
    re2.compile(r"\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"),
    # `name=value`, `name: value`, `"name": "value"` for a sensitive name (query strings,
    # header dumps, reprs, JSON extras); the value stops at a quote, comma, space or `&`.
    re2.compile(rf"(?i)((?:{_SENSITIVE})[\w-]*\\?[\"']?\s*[:=]\s*\\?[\"']?)([^\"'\\,&\s}}\]]+)"),
)
_known: set[str] = set()


def register_secret(*values: str | None) -> None:
    """Redact these exact values too (API keys, JWT secrets) wherever they show up."""
    _known.update(v for v in values if v and len(v) >= 4)


def redact(text: str) -> str:
    """`text` bounded to `MAX_LINE` and without secrets, in time linear in its length."""
    text = truncate(text, MAX_LINE)
    for secret in sorted(_known, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    text = _PATTERNS[0].sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    text = _PATTERNS[1].sub(REDACTED, text)
    return _PATTERNS[2].sub(lambda m: f"{m.group(1)}{REDACTED}", text)


def truncate(text: str, limit: int) -> str:
    """`text` cut to `limit` characters plus a marker. The cut never leaves the start of a
    secret behind: a trailing partial token, or prefix of a known secret, goes too."""
    if len(text) <= limit:
        return text
    head = text[:limit].rstrip(_TOKEN_CHARS)
    for secret in _known:
        head = _without_prefix_of(head, secret)
    # after a space: a redacted value (which ends at whitespace) never swallows the marker
    return f"{head.rstrip()} ...[truncated {len(text) - len(head)} characters]"


def _without_prefix_of(head: str, secret: str) -> str:
    for size in range(len(secret) - 1, 0, -1):
        if head.endswith(secret[:size]):
            return head[:-size]
    return head


def settings_secrets(settings: BaseModel) -> list[str]:
    """Every `SecretStr` setting's value (API keys, JWT secrets, each of a list's: the Apprise
    URLs), to redact verbatim."""
    values: list[Any] = []
    for name in type(settings).model_fields:
        value = getattr(settings, name)
        values.extend(value if isinstance(value, list) else [value])
    return [v.get_secret_value() for v in values if isinstance(v, SecretStr)]


def bind(**fields: Any) -> None:
    """Add fields to every record logged from this context on (and the tasks it starts)."""
    CONTEXT.set({**CONTEXT.get(), **{k: v for k, v in fields.items() if v not in (None, [])}})


CREDENTIAL_PATHS = ("/decisions/",)
"""Paths whose last segment is a credential (a decision link's signed token): logged cut."""


class AccessPathFilter(logging.Filter):
    """Uvicorn's access log names the path only: a query string is the client's to hold
    (tokens, search text) and may be any length, and a decision link's token is a
    credential (whoever reads the log could decide with it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if record.name == "uvicorn.access" and isinstance(args, tuple) and len(args) == 5:
            target = args[2]
            if isinstance(target, str):
                path = target.partition("?")[0]
                for prefix in CREDENTIAL_PATHS:
                    if path.startswith(prefix):
                        path = f"{prefix}[redacted]"
                record.args = (*args[:2], path, *args[3:])
        return True


class ContextFilter(logging.Filter):
    """Copies the bound context onto each record, so formatters see it as fields."""

    def filter(self, record: logging.LogRecord) -> bool:
        for key, value in CONTEXT.get().items():
            if not hasattr(record, key):
                setattr(record, key, value)
        return True


class RedactingJsonFormatter(JsonFormatter):
    """JSON lines; Temporal's `temporal_workflow` / `temporal_activity` extras stay objects."""

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        if len(line) > MAX_LINE:  # cut the message, not the JSON: the line stays an object
            line = self._bounded(record, len(line))
        return redact(line)

    def _bounded(self, record: logging.LogRecord, size: int) -> str:
        short = {
            "level": record.levelname,
            "logger": record.name,
            "message": truncate(record.getMessage(), MAX_LINE // 4),
            "time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(),
            "truncated_line_length": size,
            **CONTEXT.get(),
        }
        return json.dumps(short, ensure_ascii=False, default=str)


class RedactingTextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        context = " ".join(f"{k}={v}" for k, v in CONTEXT.get().items())
        return redact(f"{line} [{context}]" if context else line)


def formatter(fmt: LogFormat) -> logging.Formatter:
    if fmt == "text":
        return RedactingTextFormatter("%(asctime)s %(levelname)s %(name)s %(message)s")
    return RedactingJsonFormatter(
        "{levelname}{name}{message}",
        style="{",
        rename_fields={"levelname": "level", "name": "logger"},
        timestamp="time",  # ISO 8601, UTC
        json_ensure_ascii=False,
    )


def log_handler(fmt: LogFormat, stream: IO[str] | None = None) -> logging.Handler:
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(formatter(fmt))
    handler.addFilter(AccessPathFilter())
    handler.addFilter(ContextFilter())
    return handler


def configure_logging(
    fmt: LogFormat, level: str = "INFO", secrets: Iterable[str | None] = ()
) -> logging.Handler:
    """The process's one root handler. Uvicorn must be started with `log_config=None`
    so that its access and error logs come through here (and are redacted) too."""
    register_secret(*secrets)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    handler = log_handler(fmt)
    root.addHandler(handler)
    root.setLevel(level.upper())
    return handler
