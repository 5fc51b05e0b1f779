"""Every setting of every process, read from the environment (and `.env`)."""

from __future__ import annotations

import re
from datetime import timedelta
from functools import lru_cache
from pathlib import Path
from typing import Annotated

from pydantic import BeforeValidator
from pydantic_settings import BaseSettings, SettingsConfigDict
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from workflows.contract import TASK_QUEUE

_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(value: object) -> object:
    """Accept `30s`, `5m`, `2h`, `2d`, `250ms` besides what pydantic takes (seconds, ISO 8601)."""
    if isinstance(value, str) and (match := re.fullmatch(r"\s*([\d.]+)\s*(ms|s|m|h|d)\s*", value)):
        return timedelta(seconds=float(match[1]) * _UNITS[match[2]])
    return value


Duration = Annotated[timedelta, BeforeValidator(parse_duration)]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    temporal_address: str = "127.0.0.1:7233"
    """host:port of the Temporal frontend."""
    temporal_namespace: str = "default"
    task_queue: str = TASK_QUEUE
    data_dir: Path = Path(".data")
    """Where the dev server's SQLite file and the demo tools' outbox live."""
    gateway_host: str = "127.0.0.1"
    gateway_port: int = 8000
    temporal_ui_port: int = 8233
    cors_origins: list[str] = []
    """Browser origins allowed to call the gateway (JSON list, e.g. `["http://localhost:5173"]`)."""
    input_expires_in: Duration = timedelta(days=2)
    """How long the assistant's `input_required` forms stay answerable."""
    sse_keepalive: Duration = timedelta(seconds=15)
    """A `: ping` comment on any stream quiet for this long."""
    index_runs: bool = True
    """Record run ids in the `AguiRunIds` search attribute (join by run id needs it)."""
    thread_history_limit: int = 8_000
    """History events after which a thread continues as new."""

    @property
    def outbox_path(self) -> Path:
        return self.data_dir / "outbox.sqlite3"


@lru_cache
def get_settings() -> Settings:
    return Settings()


async def connect(settings: Settings) -> Client:
    """A Temporal client with the pydantic data converter every process must share."""
    return await Client.connect(
        settings.temporal_address,
        namespace=settings.temporal_namespace,
        data_converter=pydantic_data_converter,
    )
