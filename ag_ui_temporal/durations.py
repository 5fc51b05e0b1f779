"""Durations people write: `30s`, `5m`, `2h`, `2d`, `250ms` (settings and chain files alike)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Annotated

from pydantic import BeforeValidator

_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(value: object) -> object:
    """`30s`, `5m`, `2h`, `2d`, `250ms`; anything else is left to pydantic (seconds, ISO 8601)."""
    if isinstance(value, str) and (match := re.fullmatch(r"\s*([\d.]+)\s*(ms|s|m|h|d)\s*", value)):
        return timedelta(seconds=float(match[1]) * _UNITS[match[2]])
    return value


Duration = Annotated[timedelta, BeforeValidator(parse_duration)]
