"""Every setting of every process, read from the environment (and `.env`)."""

from __future__ import annotations

from datetime import timedelta
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.service import TLSConfig

from workflows.contract import TASK_QUEUE
from workflows.durations import Duration


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
    web_dist: Path | None = Path("web/dist")
    """The built web UI, served at `/` when it exists (`make run` builds it)."""
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
    approval_step_timeout: Duration = timedelta(days=2)
    """How long each step of the expense approval chain waits (`30s` to watch escalations)."""
    approval_remind_every: Duration | None = timedelta(days=1)
    """Reminders to approvers who have not answered, this often until the step expires."""
    auth_mode: Literal["dev", "none"] = "dev"
    """`dev`: the principal is the `X-Principal` header, accepted from loopback clients only."""

    # Connecting to a secured cluster or Temporal Cloud (the Temporal Worker
    # Controller injects the same variable names into the pods it manages).
    temporal_tls: bool = False
    """Use TLS to the frontend (implied by a client certificate or an API key)."""
    temporal_tls_server_ca_cert_path: Path | None = None
    """PEM CA bundle for the server certificate (default: the system roots)."""
    temporal_tls_server_name: str | None = None
    """Server name to verify instead of the address's host (SNI)."""
    temporal_tls_client_cert_path: Path | None = None
    """mTLS client certificate (PEM); needs `TEMPORAL_TLS_CLIENT_KEY_PATH`."""
    temporal_tls_client_key_path: Path | None = None
    temporal_api_key: SecretStr | None = None
    """Temporal Cloud API key (sent as a bearer token, over TLS)."""

    # The worker process.
    worker_health_host: str = "127.0.0.1"
    worker_health_port: int | None = None
    """Serve `/livez` and `/readyz` from the worker on this port (unset: no endpoint)."""
    worker_graceful_shutdown_timeout: Duration = timedelta(seconds=30)
    """On SIGTERM, how long running activities may take to finish before cancellation."""
    worker_max_cached_workflows: int = 1_000
    """Workflows kept in worker memory (~0.2-1 MB each for a thread): size to the limit."""
    worker_liveness_max_lag: Duration = timedelta(seconds=5)
    """`/livez` fails when the event loop lags more than this."""
    temporal_deployment_name: str | None = None
    """Worker Deployment name; with a build id, turns Worker Versioning on."""
    temporal_worker_build_id: str | None = None
    """This worker's build id within the deployment (e.g. the image tag or git sha)."""

    @model_validator(mode="after")
    def _versioning_needs_both(self) -> Settings:
        if (self.temporal_deployment_name is None) != (self.temporal_worker_build_id is None):
            raise ValueError("set TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID together")
        if (self.temporal_tls_client_cert_path is None) != (
            self.temporal_tls_client_key_path is None
        ):
            raise ValueError("set TEMPORAL_TLS_CLIENT_CERT_PATH and _KEY_PATH together")
        return self

    def tls_config(self) -> TLSConfig | bool:
        """What `Client.connect(tls=...)` takes: False, True (system roots) or a TLSConfig."""
        custom = (
            self.temporal_tls_server_ca_cert_path,
            self.temporal_tls_server_name,
            self.temporal_tls_client_cert_path,
        )
        if not any(custom):
            return self.temporal_tls or self.temporal_api_key is not None

        def read(path: Path | None) -> bytes | None:
            return path.read_bytes() if path else None

        return TLSConfig(
            server_root_ca_cert=read(self.temporal_tls_server_ca_cert_path),
            domain=self.temporal_tls_server_name,
            client_cert=read(self.temporal_tls_client_cert_path),
            client_private_key=read(self.temporal_tls_client_key_path),
        )

    @property
    def outbox_path(self) -> Path:
        return self.data_dir / "outbox.sqlite3"


@lru_cache
def get_settings() -> Settings:
    return Settings()


async def connect(settings: Settings) -> Client:
    """A Temporal client with the pydantic data converter every process must share."""
    api_key = settings.temporal_api_key
    return await Client.connect(
        settings.temporal_address,
        namespace=settings.temporal_namespace,
        data_converter=pydantic_data_converter,
        tls=settings.tls_config(),
        api_key=api_key.get_secret_value() if api_key else None,
    )
