"""Every setting of every process, read from the environment (and `.env`)."""

from __future__ import annotations

import re
from datetime import timedelta
from functools import lru_cache
from pathlib import Path
from typing import Final, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from temporalio.service import TLSConfig

from ag_ui_temporal.durations import Duration
from ag_ui_temporal.workflows.contract import (
    MAX_INTERRUPTS_PER_RUN,
    MAX_PENDING_INTERRUPTS,
    MAX_TOOL_CALLS_PER_RESPONSE,
    TASK_QUEUE,
    TOOL_MAX_ATTEMPTS,
)
from ag_ui_temporal.workflows.contract.names import MAX_THREAD_ID_BYTES

MIN_AUDIT_KEY_BYTES: Final = 32
"""The shortest audit key (`AUDIT_KEY`, `AUDIT_PREVIOUS_KEYS`, a key file): 256 bits."""
PACKAGED_WEB = Path(__file__).parent / "web"
"""Where `make web` builds the web UI: package data, so an install holds it beside the code."""
_POSTGRES_URL = "postgresql+asyncpg://user:password@host/db"
_MODULE_NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


class SettingError(ValueError):
    """A setting whose value cannot be used as it is (a module that is not there, a model
    pydantic-ai cannot build): its message names the setting, and the processes refuse to
    start with it (exit code 2)."""


class Settings(BaseSettings):
    # an empty variable is an unset one (compose passes `${LLM_MODEL:-}` through as "")
    model_config = SettingsConfigDict(env_file=".env", extra="ignore", env_ignore_empty=True)

    temporal_address: str = "127.0.0.1:7233"
    """host:port of the Temporal frontend (set: `make run` starts no embedded server)."""
    temporal_namespace: str = "default"
    """The Temporal namespace every process uses."""
    task_queue: str = TASK_QUEUE
    """The thread workers' task queue (worker and gateway must agree)."""
    data_dir: Path = Path(".data")
    """Where the dev server's SQLite file and the default store (`store.sqlite3`) live."""
    database_url: SecretStr | None = None
    """The store (outbox, transcripts): `postgresql+asyncpg://u:p@host/db`; unset: SQLite."""
    gateway_host: str = "127.0.0.1"
    """Address the gateway listens on."""
    gateway_port: int = 8000
    """Port the gateway listens on."""
    dev_server_address: str = "127.0.0.1:7233"
    """host:port where `ag-ui-temporal dev` (`make run`) runs its embedded Temporal server
    (gRPC), which the stack then uses; unused with `TEMPORAL_ADDRESS`, which means "use that
    server, start none". Not `TEMPORAL_*`: those names belong to Temporal's own tools (the
    CLI reads `TEMPORAL_ADDRESS`, the UI server `TEMPORAL_UI_PORT`), and a shell set up for
    them must not move this server. Off loopback (`0.0.0.0:7233`) anyone who reaches it can
    read and change every thread: it has no authentication."""
    dev_server_ui_port: int = Field(8233, ge=1, le=65535)
    """Port of that embedded server's Temporal UI, on `DEV_SERVER_ADDRESS`'s host."""
    web_dist: Path | None = PACKAGED_WEB
    """The built web UI, served at `/` when it holds an `index.html`. The default is the UI
    installed with the package, wherever the process runs: `make web` (`make run`) builds it
    there, and a wheel built after that carries it. Without one, the gateway serves the API
    alone and `/` says how to get the UI."""
    cors_origins: list[str] = []
    """Browser origins allowed to call the gateway (JSON list, e.g. `["http://localhost:5173"]`)."""
    input_expires_in: Duration = timedelta(days=2)
    """How long the assistant's `input_required` forms stay answerable."""
    tool_max_attempts: int = Field(TOOL_MAX_ATTEMPTS, ge=1)
    """Attempts of a tool's activity; after the last (or a non-retryable error) the tool failed
    for good: the agent gets the error as the tool's result and the run goes on. Fixed per
    thread when it starts. The tools pydantic-ai runs as activities are tried as often as
    their agent was built with (`thread_capabilities(tool_attempts=...)`, by default this
    setting's default)."""
    sse_keepalive: Duration = timedelta(seconds=15)
    """A `: ping` comment on any stream quiet for this long."""
    snapshot_max_bytes: int = Field(4 << 20, ge=0)
    """Most bytes of archived messages a run's `MESSAGES_SNAPSHOT` carries besides the thread's
    window (the newest first); older ones are read with hydrate's `before` pages. A join's
    snapshot carries the window only."""
    index_runs: bool = True
    """Record the ids of runs still going after their first workflow task in the `AguiRunIds`
    search attribute (joining a run by its id alone needs it)."""
    audit_in_task: bool = True
    """A thread sends its audit records with a local activity in the workflow task that made
    the change (the answer waits for the store's append, and Temporal sees no activity and no
    task more); `false`: with an activity after it (what a store far from the workers, whose
    append takes many round trips, may want; and Temporal's time-skipping test server, which
    cannot complete such a task). Fixed when a thread starts."""
    thread_history_limit: int = 8_000
    """History events after which a thread continues as new."""
    thread_task_timeout: Duration = Field(
        timedelta(seconds=10), gt=timedelta(0), le=timedelta(seconds=120)
    )
    """Temporal's workflow task timeout of a thread, fixed when it starts (its continuations
    keep it): how long a worker may hold one of its workflow tasks before Temporal hands the
    task to another (a task a killed worker held waits this long). A task that keeps failing
    is tried again about this often, from its third attempt a little less often each time
    (workers report only its first failure and let the later ones time out): the gateway
    finds a thread stuck (in its task's third attempt) about this long after the task first
    failed."""
    stuck_check_every: Duration = Field(timedelta(seconds=3), gt=timedelta(0))
    """How often the gateway looks whether the thread of a run that waits is stuck (its
    workflow task keeps failing), the first look after as long: most runs end before."""
    approval_step_timeout: Duration = timedelta(days=2)
    """How long each step of the expense approval chain waits (`30s` to watch escalations)."""
    approval_remind_every: Duration | None = timedelta(days=1)
    """Reminders to approvers who have not answered, this often until the step expires."""
    approvals_admins: list[str] = []
    """Principals (or `group:G`) who may read any approval chain (`GET /approvals/{chain}`)
    and list anyone's approvals; others see only chains they requested or take part in.
    JSON in the environment: `APPROVALS_ADMINS='["auditor", "group:finance-admins"]'`."""
    thread_admins: list[str] = []
    """Principals (or `group:G`) who may see, run and answer threads that have no owner (a
    producer's thread started without `thread_owner=`, threads older than owners); nobody
    else may. Every other thread is its owner's only, admins' included. With `AUTH_MODE=none`
    the one `anonymous` user is an admin. JSON: `THREAD_ADMINS='["ops", "group:support"]'`."""
    # Authentication (gateway/auth.py). Every thread and approvals request has a principal.
    auth_mode: Literal["dev", "api_key", "jwt", "none"] = "dev"
    """`dev`: the `X-Principal` (+ `X-Principal-Groups`) headers (none sent: `anonymous`);
    `none`: everyone is `anonymous`. Both serve loopback only: the gateway refuses to start
    with them on another `GATEWAY_HOST`, and refuses proxied or remote requests.
    `api_key`: `Authorization: Bearer KEY` or `X-API-Key: KEY`, looked up in
    `API_KEYS_FILE`; `jwt`: `Authorization: Bearer JWT`."""
    api_keys_file: Path | None = None
    """JSON or YAML list of `{sha256, principal, groups}` (`ag-ui-temporal hash-key` makes one)."""
    jwt_secret: SecretStr | None = None
    """HS256 shared secret (enables HS256 tokens)."""
    jwt_public_key: str | None = None
    """RS256 public key, PEM text or a path to a PEM file (enables RS256 tokens)."""
    jwt_jwks_url: str | None = None
    """RS256 keys from this JWKS URL (cached, refreshed for an unknown `kid`)."""
    jwt_jwks_cache: Duration = timedelta(minutes=5)
    """How long fetched JWKS keys are reused before the URL is read again."""
    jwt_issuer: str | None = None
    """Required `iss` (unset: not checked)."""
    jwt_audience: str | None = None
    """Required `aud` (unset: tokens that carry an `aud` are refused)."""
    jwt_leeway: Duration = timedelta(seconds=30)
    """Clock skew allowed on `exp`/`nbf`/`iat`."""
    jwt_principal_claim: str = "sub"
    """The claim that names the principal."""
    jwt_groups_claim: str = "groups"
    """The claim listing the principal's groups (a list, or a space/comma separated string)."""
    jwt_email_claim: str = "email"
    """The claim with the principal's email address: the gateway remembers it (in the store)
    for the notifications of people the `DIRECTORY_FILE` has no address for, only when the
    token says the address is verified (`email_verified: true`, or the string `"true"`)."""
    jwt_emails_verified: bool = False
    """The issuer verifies every address it puts in a token, and says so in no
    `email_verified` claim: its addresses are remembered without one. Set it only for such
    an issuer: otherwise anyone can name someone else's address and have their mail sent
    there."""
    jwt_name_claim: str = "name"
    """The claim with the principal's display name, remembered for their notifications."""
    metrics_public: bool | None = None
    """`GET /metrics` without credentials (unset: only in `dev`/`none`, which are loopback
    only); otherwise it takes the same credentials as the API."""
    docs_public: bool | None = None
    """`/docs`, `/redoc` and `/openapi.json` are served (unset: only in `dev`/`none`)."""

    # Limits (gateway/server.py, limits.py, input_limits.py): over-size request heads get 431,
    # bodies 413, over-limit inputs 422, before any stream; the thread's interrupt limits
    # travel in `AgentConfig`.
    max_body_bytes: int = Field(1 << 20, ge=1024)
    """Largest request body (any POST), with or without Content-Length."""
    max_header_bytes: int = Field(64 << 10, ge=1024)
    """Largest request head (request line and headers): `431` as soon as that much arrived."""
    header_timeout: Duration = Field(timedelta(seconds=10), gt=timedelta(0))
    """A connection's time to send a whole request head, from its opening or the end of its
    previous response; then it is closed (`408` if a head had begun)."""
    max_messages: int = Field(1_000, ge=1)
    """Messages in one `RunAgentInput` (clients re-send the transcript: keep it generous)."""
    max_resume_entries: int = Field(100, ge=1)
    """Entries in one `resume` (at least `MAX_INTERRUPTS_PER_RUN`: one resume answers a run)."""
    max_payload_bytes: int = Field(64 << 10, ge=64)
    """JSON size of each resume payload and metadata, of `state` and of `forwardedProps`."""
    max_string_length: int = Field(100_000, ge=16)
    """Longest string (or object key) anywhere in the input: messages, state, payloads, tools."""
    max_id_length: int = Field(256, ge=16, le=MAX_THREAD_ID_BYTES)
    """Longest `threadId`, `runId`, `parentRunId`, message id or `interruptId`, in UTF-8 bytes
    (at most 988: a thread's workflow id is within Temporal's 1000). A `runId` also takes at
    most 99 bytes in the `AguiRunIds` search attribute (non-ASCII escaped: `é` is 6)."""
    max_json_depth: int = Field(32, ge=4)
    """Deepest nesting of objects and lists anywhere in the input."""
    max_interrupts_per_run: int = Field(
        MAX_INTERRUPTS_PER_RUN, ge=1, le=MAX_TOOL_CALLS_PER_RESPONSE
    )
    """Interrupts one run's `RUN_FINISHED` delivers, and tool calls one model response may make;
    an agent asking more gets `LIMIT_EXCEEDED` before any of them is shown or run."""
    max_pending_interrupts: int = Field(MAX_PENDING_INTERRUPTS, ge=1)
    """Open + offered interrupts a thread holds; producers' offers beyond it are refused."""
    # Per-principal limits (gateway/limits.py): beyond them, 429 with `Retry-After` before any
    # stream. Counted in each gateway replica's memory (gateways share no state), so with N
    # replicas behind a balancer a principal gets up to N times these.
    max_streams_per_principal: int = Field(20, ge=1)
    """Open event streams (runs, re-attaches, joins) one principal may hold at once."""
    max_runs_per_minute: int = Field(120, ge=1)
    """`POST /agents/{agent}` and joins (`GET ?runId=`) one principal may send a minute
    (bursts up to this many)."""
    # Decision links' limits (gateway/limits.py): beyond them, a `429` page with `Retry-After`
    # and no Temporal call. Counted in each gateway replica's memory, as the per-principal ones.
    max_requests_per_link: int = Field(10, ge=1)
    """GETs and POSTs of one decision link a minute (bursts up to this many): its person opens
    it and clicks; a mail scanner may open it a few times more."""
    max_link_requests_per_address: int = Field(120, ge=1)
    """GETs and POSTs of decision links (any) from one client address a minute (bursts up to
    this many)."""

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
    """mTLS client private key (PEM); needs `TEMPORAL_TLS_CLIENT_CERT_PATH`."""
    temporal_api_key: SecretStr | None = None
    """Temporal Cloud API key (sent as a bearer token, over TLS)."""

    # The worker process.
    worker_health_host: str = "127.0.0.1"
    """Address of the worker's `/livez` and `/readyz` (the image sets `0.0.0.0`)."""
    worker_health_port: int | None = None
    """Serve `/livez` and `/readyz` from the worker on this port (unset: no endpoint)."""
    worker_graceful_shutdown_timeout: Duration = timedelta(seconds=30)
    """On SIGTERM, how long running activities may take to finish before cancellation."""
    worker_max_cached_workflows: int = 1_000
    """Workflows kept in worker memory (~1.2 MB each for a thread): size it to the limit."""
    worker_sticky_queue_timeout: Duration = Field(timedelta(seconds=10), gt=timedelta(0))
    """How long Temporal keeps a workflow's next task for the worker that has the workflow in
    memory before any worker may take it (and replay it): the next task of a workflow whose
    worker was killed waits this long."""
    worker_liveness_max_lag: Duration = timedelta(seconds=5)
    """`/livez` fails when the event loop lags more than this."""
    temporal_deployment_name: str | None = None
    """Worker Deployment name; with a build id, turns Worker Versioning on."""
    temporal_worker_build_id: str | None = None
    """This worker's build id within the deployment (e.g. the image tag or git sha)."""

    # Observability (observability/): logs, traces, metrics.
    log_format: Literal["json", "text"] | None = None
    """`json` (one object a line) or `text`; unset: `text` for `dev`, `json` otherwise."""
    log_level: str = "INFO"
    """Level of the root logger (`DEBUG`, `INFO`, `WARNING`, ...)."""
    otel_enabled: bool = False
    """OpenTelemetry traces gateway -> Temporal -> worker, over OTLP (`OTEL_EXPORTER_OTLP_*`)."""
    worker_metrics_host: str = "127.0.0.1"
    """Address of the worker's Prometheus `/metrics` (the k8s base sets `0.0.0.0`)."""
    worker_metrics_port: int | None = None
    """The worker's Prometheus `/metrics` on this port (unset: no endpoint)."""

    # Approvals that reach people (notify/, docs/notifications.md): who people are, the channels
    # that tell them something waits, and the signed links they decide from. No channel set:
    # nobody is told anything outside the chat.
    public_url: str | None = None
    """The gateway's address as people reach it, for the links in notifications (e.g.
    `https://approvals.example.com`); unset: `http://GATEWAY_HOST:GATEWAY_PORT`."""
    directory_file: Path | None = None
    """YAML or JSON: principal -> `{email, name, groups, channels, apprise}`
    (docs/notifications.md). Unset: nobody has an address; only the webhook and `APPRISE_URLS`
    are told."""
    notify_webhook_url: str | None = None
    """POST every notification here as JSON, signed per Standard Webhooks."""
    notify_webhook_secret: SecretStr | None = None
    """The webhook's signing secret (`whsec_` + base64, as Standard Webhooks gives them);
    required with `NOTIFY_WEBHOOK_URL`."""
    smtp_url: SecretStr | None = None
    """Email: `smtp://[user:password@]host[:port][?starttls=true]` (`smtps://` for TLS from the
    start). Sent to each person's directory `email`."""
    smtp_from: str = "ag-ui-temporal <approvals@localhost>"
    """The `From:` of notification emails."""
    apprise_urls: list[SecretStr] = []
    """Chat services every notification is posted to, as Apprise URLs (`slack://...`,
    `msteams://...`, `matrixs://...`): a JSON list. A person's own are in the directory."""
    decision_link_secret: SecretStr | None = None
    """Signs the approve/reject links in notifications (HS256, at least 32 bytes). Unset: the
    notifications link to the inbox only."""
    notify_give_up_after: Duration = Field(timedelta(days=3), gt=timedelta(0))
    """How long a notification a channel keeps refusing is retried (with backoff) before it
    is given up and marked failed."""
    notify_max_retry_interval: Duration = Field(timedelta(minutes=10), gt=timedelta(0))
    """The longest wait between two attempts at a failing channel."""

    # The audit trail (store/audit.py, GET /audit, `ag-ui-temporal audit`).
    auditors: list[str] = []
    """Principals (or `group:G`) who may read every record of the audit trail (`GET /audit`);
    everyone else reads only their own threads' and the chains they take part in. JSON:
    `AUDITORS='["compliance", "group:auditors"]'`."""
    audit_retention: Duration | None = None
    """How long the store keeps audit records (e.g. `2555d`); unset: forever. The worker drops
    older ones once an hour, keeping each trail verifiable from where it now starts."""
    audit_key: SecretStr | None = None
    """The secret the audit trail is keyed with (at least 32 bytes; `ag-ui-temporal audit
    keygen` makes one): every record's hash, every anchor a prune leaves and every heads
    export is an HMAC under it, so whoever changes the database without it is caught by
    `audit verify`. Keep it out of the database and its backups. Needed by the worker and the
    `audit` commands (not the gateway). Unset, and no `AUDIT_KEY_FILE`: a SQLite store with
    `AUTH_MODE` dev or none keys the trail with `DATA_DIR/audit.key` (made on first use);
    any other worker refuses to start."""
    audit_key_file: Path | None = None
    """A file holding `AUDIT_KEY` (a mounted secret); set one of the two."""
    audit_previous_keys: list[SecretStr] = []
    """Keys the trail was keyed with before a rotation: what they keyed still verifies, and
    nothing new is keyed with them. JSON: `AUDIT_PREVIOUS_KEYS='["old secret"]'`."""

    # The pydantic-ai agents (agents/) and the LLM behind them (agents/models.py), resolved when
    # the worker starts.
    agent_modules: list[str] = Field(default_factory=list)
    """Python modules that register agents and their activities when imported
    (`register`, `register_graph`, `register_activities`): the agents served beside the
    library's `inbox`, and nothing else; a JSON list, e.g. `["my_agents.support"]`. The demo
    is one such module, `ag_ui_temporal.demo.agents` (`make run` names it). Found in the
    working directory first, then among the installed packages (as `uvicorn` finds an app)."""
    llm_model: str | None = None
    """A pydantic-ai model string: `openai-chat:M` (Chat Completions, any compatible server),
    `openai:M` (Responses API), `anthropic:M`, `ollama:M`, ...; unset: the demo and the
    examples run their offline models."""
    openai_base_url: str | None = None
    """Base URL of the OpenAI(-compatible) API for `openai-chat:`/`openai:` (e.g. vLLM's `/v1`)."""
    openai_api_key: SecretStr | None = None
    """API key for `openai-chat:`/`openai:` (a local server at `OPENAI_BASE_URL` may need none)."""
    offline_model_word_delay: float = Field(0.02, ge=0, le=1)
    """Seconds between the words the offline demo model streams, so a reader sees its text
    grow (the tests run it at 0)."""

    @field_validator("dev_server_address")
    @classmethod
    def _host_and_port(cls, address: str) -> str:
        host_port(address)  # raises ValueError with what is wrong
        return address

    @field_validator("database_url")
    @classmethod
    def _a_store(cls, url: SecretStr | None) -> SecretStr | None:
        if url is None:
            return None
        from sqlalchemy import make_url  # only where a store is named
        from sqlalchemy.exc import ArgumentError

        try:
            backend = make_url(url.get_secret_value()).get_backend_name()
        except ArgumentError:
            raise ValueError(f"not a database URL (e.g. {_POSTGRES_URL})") from None
        if backend not in ("postgresql", "sqlite"):
            raise ValueError(f"the store runs on PostgreSQL ({_POSTGRES_URL}) or SQLite")
        return url

    @field_validator("agent_modules")
    @classmethod
    def _module_names(cls, modules: list[str]) -> list[str]:
        for name in modules:
            if name.endswith(".py"):  # `x.py` is a module name too (`py` in package `x`)
                raise ValueError(f"{name!r} is a file: name its module, {_module_of(name)!r}")
            if _MODULE_NAME.fullmatch(name):
                continue
            if ":" in name:
                module = name.partition(":")[0]
                raise ValueError(
                    f"{name!r}: name the module alone, {module!r} (its `register` calls serve"
                    " what it defines)"
                )
            raise ValueError(f"{name!r} is no module name (e.g. my_agents.support)")
        return modules

    @model_validator(mode="after")
    def _versioning_needs_both(self) -> Settings:
        if (self.temporal_deployment_name is None) != (self.temporal_worker_build_id is None):
            raise ValueError("set TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID together")
        if (self.temporal_tls_client_cert_path is None) != (
            self.temporal_tls_client_key_path is None
        ):
            raise ValueError("set TEMPORAL_TLS_CLIENT_CERT_PATH and _KEY_PATH together")
        # AUTH_MODE's credentials are the gateway's to check (`gateway.auth`): a worker reads
        # AUTH_MODE (whether it may make a development audit key) but verifies no token, and a
        # Deployment gives it no JWT secret.
        if self.notify_webhook_url and self.notify_webhook_secret is None:
            raise ValueError("NOTIFY_WEBHOOK_URL needs NOTIFY_WEBHOOK_SECRET")
        secret = self.decision_link_secret
        if secret is not None and len(secret.get_secret_value().encode()) < 32:
            raise ValueError("DECISION_LINK_SECRET must be at least 32 bytes")
        if self.audit_key is not None and self.audit_key_file is not None:
            raise ValueError("set AUDIT_KEY or AUDIT_KEY_FILE, not both")
        audit_keys = [self.audit_key, *self.audit_previous_keys]
        if any(
            len(k.get_secret_value().encode()) < MIN_AUDIT_KEY_BYTES
            for k in audit_keys
            if k is not None
        ):
            raise ValueError(
                f"AUDIT_KEY and AUDIT_PREVIOUS_KEYS must be {MIN_AUDIT_KEY_BYTES} bytes or more"
            )
        if self.max_resume_entries < self.max_interrupts_per_run:
            raise ValueError("MAX_RESUME_ENTRIES must be >= MAX_INTERRUPTS_PER_RUN")
        return self

    @property
    def trusts_callers(self) -> bool:
        """`dev` and `none` believe the caller (headers, or nobody at all): loopback only."""
        return self.auth_mode in ("dev", "none")

    def public(self, setting: bool | None) -> bool:
        """`METRICS_PUBLIC` / `DOCS_PUBLIC`: unset means open only where auth trusts anyway."""
        return self.trusts_callers if setting is None else setting

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
    def base_url(self) -> str:
        """`PUBLIC_URL` (no trailing slash), else the gateway's own address."""
        return (self.public_url or f"http://{self.gateway_host}:{self.gateway_port}").rstrip("/")

    @property
    def notifies(self) -> bool:
        """Whether any channel is set (otherwise nothing is sent, nothing is started)."""
        return bool(self.notify_webhook_url or self.smtp_url or self.apprise_urls)

    @property
    def store_url(self) -> str:
        """`DATABASE_URL`, else the SQLite store under `DATA_DIR`."""
        if self.database_url is not None:
            return self.database_url.get_secret_value()
        return sqlite_url(self.data_dir / "store.sqlite3")


@lru_cache
def get_settings() -> Settings:
    return Settings()


def host_port(address: str) -> tuple[str, int]:
    """`HOST:PORT` (`[::1]:7233` for IPv6) split, the brackets dropped; ValueError otherwise."""
    host, _, port = address.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        host = ""  # IPv6 without its brackets: which colon starts the port is unclear
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{address!r} is not HOST:PORT (e.g. 127.0.0.1:7233, [::1]:7233)")
    return host, int(port)


def _module_of(file: str) -> str:
    """`my_agents/support.py` -> `my_agents.support`: what a person meant by a file name."""
    return file.removesuffix(".py").strip("./").replace("/", ".")


def sqlite_url(path: Path) -> str:
    """The URL of a SQLite store file (absolute, so the working directory does not matter)."""
    from sqlalchemy import URL  # SQLAlchemy loads only in processes using the store

    return URL.create("sqlite+aiosqlite", database=str(path.resolve())).render_as_string()
