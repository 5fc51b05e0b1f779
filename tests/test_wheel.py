"""What a plain `pip install` gives a team: the wheel built from this checkout, installed in a
fresh venv with its dependencies from the package index (no extras) and OpenAI's
`openai-agents` (import name `agents`), used from a project of the team's own whose modules
are named as Temporal's samples name them (`workflows.py`, `settings.py`, `worker.py`):

- every name of `ag_ui_temporal.__all__` imports, and the team's modules stay theirs;
- `import agents` is still OpenAI's;
- the install adds one import package (`ag_ui_temporal`) and one script (`ag-ui-temporal`);
- the team's workflow, run by the team's worker (a process of the venv whose client is given
  only `plugins=[AgUiTemporalPlugin()]`), pauses in a thread with `ask_in_thread` and gets back
  exactly the 100 KiB answer a person gave through the gateway;
- the installed CLI starts, and its gateway serves at `/` the UI the wheel carries (or, built
  without one, says how to get it).

The threads' worker and the gateway the person answers through are the test stack's
(tests/conftest.py); only the team's worker and the installed gateway run from the venv, on
the same Temporal server. Installing takes a minute or more, so the module shares one venv.
Without a reachable package index the install fails every test here, with pip's words.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import signal
import sys
import textwrap
import uuid
import zipfile
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from temporalio.client import Client
from temporalio.worker import Worker

import ag_ui_temporal
from ag_ui_temporal.settings import PACKAGED_WEB, Settings
from tests.agui import finished, resolve, run
from tests.conftest import free_port, serve_gateway
from tests.modules import PACKAGE, ROOT
from tests.test_producers import delivered, hydrate, until

T = TypeVar("T")

ANSWER_CHARS = 100 << 10
"""The answer's one string: 100 KiB of ASCII, over the gateway's default `MAX_PAYLOAD_BYTES`
(64 KiB) and `MAX_STRING_LENGTH` (100,000), so the gateway the person answers through is
roomier (every other limit is the default)."""
GATEWAY_LIMIT = 128 << 10

BUILD_WITHIN = 600.0
INSTALL_WITHIN = 1500.0
"""Bounds, in seconds, on waits that must end (a build, an install from the index on two
cores), so that a hang fails the test; not timed assertions."""
START_WITHIN = 180.0
HEARD_WITHIN = 180.0
STOP_WITHIN = 60.0

TEAM_WORKFLOWS = '''
"""The team's workflows. One order asks its owner, in a chat thread, for notes."""

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from temporalio import workflow

from ag_ui_temporal import ask_in_thread

NOTES = {
    "type": "object",
    "properties": {"notes": {"type": "string"}},
    "required": ["notes"],
    "additionalProperties": False,
}


@dataclass
class ShipOrder:
    thread_id: str
    owner: str
    thread_task_queue: str


@workflow.defn
class ShipOrderWorkflow:
    @workflow.run
    async def run(self, order: ShipOrder) -> dict[str, Any]:
        outcome = await ask_in_thread(
            order.thread_id,
            message="Any notes for the courier?",
            response_schema=NOTES,
            expires_in=timedelta(days=1),
            thread_owner=order.owner,
            allowed_resolvers=[order.owner],
            thread_task_queue=order.thread_task_queue,
        )
        return {"status": outcome.status, "payload": outcome.payload}
'''

TEAM_SETTINGS = '''
"""The team's settings, from the environment."""

import os

TEMPORAL_ADDRESS = os.environ.get("TEMPORAL_ADDRESS", "localhost:7233")
TEMPORAL_NAMESPACE = os.environ.get("TEMPORAL_NAMESPACE", "default")
TASK_QUEUE = os.environ.get("ORDERS_TASK_QUEUE", "orders")
'''

TEAM_WORKER = '''
"""The team's worker: its own workflows on its own queue; of ag-ui-temporal, only the plugin."""

import asyncio
import signal

from temporalio.client import Client
from temporalio.worker import Worker

import settings
from ag_ui_temporal import AgUiTemporalPlugin
from workflows import ShipOrderWorkflow


async def main() -> None:
    client = await Client.connect(
        settings.TEMPORAL_ADDRESS,
        namespace=settings.TEMPORAL_NAMESPACE,
        plugins=[AgUiTemporalPlugin()],
    )
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with Worker(client, task_queue=settings.TASK_QUEUE, workflows=[ShipOrderWorkflow]):
        print("polling", settings.TASK_QUEUE, flush=True)
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(main())
'''

TEAM_FILES = {
    "workflows.py": TEAM_WORKFLOWS,
    "settings.py": TEAM_SETTINGS,
    "worker.py": TEAM_WORKER,
}


@dataclass(frozen=True)
class Install:
    wheel: Path
    venv: Path
    project: Path
    """The team's project: its own workflows.py, settings.py and worker.py."""
    site_packages: Path

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of a process of the venv: nothing of the checkout's on its path."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env.pop("WEB_DIST", None)  # the installed default is what is tested
        return {**env, "PATH": f"{self.bin}{os.pathsep}{env.get('PATH', '')}", **extra}


async def execute(
    *command: str | Path, cwd: Path, within: float, env: dict[str, str] | None = None, what: str
) -> str:
    """Run `command` to its end; its stdout, or a failure that quotes its stderr."""
    process = await asyncio.create_subprocess_exec(
        *command,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), within)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise AssertionError(f"{what}: still running after {within:.0f}s") from None
    assert process.returncode == 0, f"{what} exited {process.returncode}:\n{err.decode()[-4000:]}"
    return out.decode()


def source_tree(dest: Path) -> Path:
    """What `pip install .` reads, copied: pyproject.toml, the package (its `web/` too, when
    `make web` built it) and what its symlinks point at. A build in the checkout would reuse
    its `build/` folder, whose stale files end up in the wheel, and share it with any other
    build at the same time."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, dest / name)
    skip = shutil.ignore_patterns("__pycache__")
    package = ROOT / PACKAGE
    shutil.copytree(package, dest / PACKAGE, symlinks=True, ignore=skip)
    for link in package.iterdir():
        if link.is_symlink():
            target = link.resolve()
            if target.is_dir():
                shutil.copytree(target, dest / target.relative_to(ROOT), ignore=skip)
            else:
                shutil.copy2(target, dest / target.relative_to(ROOT))
    return dest


@pytest.fixture(scope="module")
async def installed(tmp_path_factory: pytest.TempPathFactory) -> Install:
    """The wheel, built from a copy of this checkout, installed in a fresh venv with its
    dependencies and `openai-agents` from the package index; and the team's project."""
    root = tmp_path_factory.mktemp("wheel")
    source = source_tree(root / "source")
    wheels = root / "wheels"
    await execute(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--no-deps",
        "--wheel-dir",
        wheels,
        source,
        cwd=root,
        within=BUILD_WITHIN,
        what="pip wheel of the checkout",
    )
    [wheel] = wheels.glob("ag_ui_temporal-*.whl")
    venv = root / "venv"
    await execute(
        sys.executable, "-m", "venv", venv, cwd=root, within=BUILD_WITHIN, what="python -m venv"
    )
    await execute(
        venv / "bin" / "python",
        "-m",
        "pip",
        "install",
        "--quiet",
        wheel,
        "openai-agents",
        cwd=root,
        within=INSTALL_WITHIN,
        what="pip install of the wheel and openai-agents into a fresh venv "
        "(their dependencies come from the package index: is it reachable?)",
    )
    project = root / "team"
    project.mkdir()
    for name, text in TEAM_FILES.items():
        (project / name).write_text(textwrap.dedent(text).lstrip())
    where = await execute(
        venv / "bin" / "python",
        "-c",
        "import sysconfig; print(sysconfig.get_path('purelib'))",
        cwd=project,
        within=START_WITHIN,
        what="the venv's site-packages",
    )
    return Install(wheel=wheel, venv=venv, project=project, site_packages=Path(where.strip()))


async def in_venv(installed: Install, *code: str, cwd: Path | None = None) -> Any:
    """The JSON that `code`, run by the venv's Python in the team's project, prints."""
    out = await execute(
        installed.bin / "python",
        "-c",
        "\n".join(textwrap.dedent(block) for block in code),
        cwd=cwd or installed.project,
        env=installed.env(),
        within=START_WITHIN,
        what="the venv's python",
    )
    return json.loads(out.splitlines()[-1])  # the last line: whatever an import printed before


LANGGRAPH = "pip install 'ag-ui-temporal[langgraph]'"

IMPORT_THE_DOOR = """
    import json, ag_ui_temporal
    extras = {}  # the names an extra brings (not installed here): what they say instead
    for name in ag_ui_temporal.__all__:
        try:
            getattr(ag_ui_temporal, name)
        except ImportError as err:
            extras[name] = str(err)
"""


async def test_every_public_name_imports_beside_the_teams_own_modules(installed: Install):
    found = await in_venv(
        installed,
        IMPORT_THE_DOOR,
        """
    import settings, worker, workflows
    from ag_ui_temporal import AgUiTemporalPlugin, ask_in_thread
    print(json.dumps({
        "door": ag_ui_temporal.__file__,
        "all": ag_ui_temporal.__all__,
        "team": [m.__file__ for m in (settings, worker, workflows)],
        "ask": workflows.ask_in_thread is ask_in_thread,
        "plugin": worker.AgUiTemporalPlugin is AgUiTemporalPlugin,
        "extras": extras,
    }))
    """,
    )
    assert Path(found["door"]) == installed.site_packages / PACKAGE / "__init__.py"
    assert found["all"] == ag_ui_temporal.__all__
    team = [installed.project / name for name in ("settings.py", "worker.py", "workflows.py")]
    assert [Path(f) for f in found["team"]] == team  # the team's, not anything installed
    assert found["ask"] and found["plugin"]
    graphs = {n for n, where in ag_ui_temporal._WHERE.items() if where in ag_ui_temporal.EXTRAS}
    assert set(found["extras"]) == graphs  # the rest imports without any extra
    for name, said in found["extras"].items():
        assert said == f"ag_ui_temporal.{name} needs the langgraph extra: " + LANGGRAPH, said


async def test_agents_is_still_openais(installed: Install):
    found = await in_venv(
        installed,
        IMPORT_THE_DOOR,
        """
    import importlib.metadata
    import agents
    print(json.dumps({
        "file": agents.__file__,
        "names": [hasattr(agents, "Agent"), hasattr(agents, "Runner")],
        "from": importlib.metadata.packages_distributions()["agents"],
    }))
    """,
    )
    assert Path(found["file"]) == installed.site_packages / "agents" / "__init__.py"
    assert found["names"] == [True, True]
    assert found["from"] == ["openai-agents"]


async def test_the_install_adds_one_import_package_and_one_script(installed: Install):
    found = await in_venv(
        installed,
        """
    import importlib.metadata, importlib.util, json
    ours = importlib.metadata.distribution("ag-ui-temporal")
    print(json.dumps({
        "version": ours.version,
        "files": [str(f) for f in ours.files],
        "top_level": ours.read_text("top_level.txt").split(),
        "scripts": [e.name for e in ours.entry_points],
        "claimed": [name for name, dists in importlib.metadata.packages_distributions().items()
                    if "ag-ui-temporal" in dists],
        "samples": [n for n in ("workflows", "settings", "worker", "gateway")
                    if importlib.util.find_spec(n) is not None],
    }))
    """,
        cwd=installed.venv,
    )
    files = [Path(f) for f in found["files"]]
    in_site = {f.parts[0] for f in files if f.parts[0] != ".."}
    assert in_site == {PACKAGE, f"{PACKAGE}-{found['version']}.dist-info"}
    scripts = {(installed.site_packages / f).resolve() for f in files if f.parts[0] == ".."}
    assert scripts == {(installed.bin / "ag-ui-temporal").resolve()}
    assert found["top_level"] == found["claimed"] == [PACKAGE]
    assert found["scripts"] == ["ag-ui-temporal"]
    assert found["samples"] == []  # nothing installed takes the names a team's modules have


def test_the_wheel_carries_the_built_ui(installed: Install):
    """Whatever `make web` built into the package is in the wheel (in CI, `make test` builds
    it first); nothing else of the UI."""
    with zipfile.ZipFile(installed.wheel) as wheel:
        carried = {n for n in wheel.namelist() if n.startswith(f"{PACKAGE}/web/")}
    built = {
        f"{PACKAGE}/web/{path.relative_to(PACKAGED_WEB).as_posix()}"
        for path in PACKAGED_WEB.rglob("*")
        if path.is_file()
    }
    assert carried == built


@pytest.fixture(scope="module")
def team_queue() -> str:
    return f"team-orders-{uuid.uuid4().hex[:8]}"


async def alive_while(
    process: asyncio.subprocess.Process, waiting: Awaitable[T], within: float, what: str, log: Path
) -> T:
    """`waiting`'s result; a failure if it takes over `within` seconds or `process` ends first."""
    task, ended = asyncio.ensure_future(waiting), asyncio.ensure_future(process.wait())
    try:
        await asyncio.wait({task, ended}, timeout=within, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            return task.result()
        why = f"exited {process.returncode}" if ended.done() else f"no result in {within:.0f}s"
        raise AssertionError(f"{what}: {why}; its stderr:\n{log.read_text()[-4000:]}")
    finally:
        for pending in (task, ended):
            pending.cancel()


async def stop(process: asyncio.subprocess.Process, sig: signal.Signals) -> None:
    if process.returncode is None:
        process.send_signal(sig)
        try:
            await asyncio.wait_for(process.wait(), STOP_WITHIN)
        except TimeoutError:
            process.kill()
            await process.wait()


@pytest.fixture(scope="module")
async def team_worker(
    installed: Install, client: Client, team_queue: str
) -> AsyncIterator[tuple[asyncio.subprocess.Process, Path]]:
    """`python worker.py` in the team's project, on the test stack's Temporal server."""
    log = installed.project / "worker.stderr"
    env = installed.env(
        TEMPORAL_ADDRESS=client.service_client.config.target_host,
        TEMPORAL_NAMESPACE=client.namespace,
        ORDERS_TASK_QUEUE=team_queue,
    )
    with log.open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            installed.bin / "python",
            "worker.py",
            cwd=installed.project,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
        )
    try:
        assert process.stdout is not None
        line = await alive_while(
            process, process.stdout.readline(), START_WITHIN, "the team's worker", log
        )
        assert line.split() == [b"polling", team_queue.encode()]
        yield process, log
    finally:
        await stop(process, signal.SIGTERM)


@pytest.fixture(scope="module")
async def roomy(settings: Settings, client: Client, worker: Worker) -> AsyncIterator[str]:
    """The test stack's gateway, taking the 100 KiB answer."""
    update = {"max_payload_bytes": GATEWAY_LIMIT, "max_string_length": GATEWAY_LIMIT}
    async with serve_gateway(settings.model_copy(update=update), client) as url:
        yield url


async def test_the_teams_workflow_gets_a_100_kib_answer_given_through_the_gateway(
    team_worker: tuple[asyncio.subprocess.Process, Path],
    team_queue: str,
    roomy: str,
    client: Client,
    settings: Settings,
    thread_id: str,
):
    process, log = team_worker
    owner = f"owner-{thread_id}"
    order = await client.start_workflow(
        "ShipOrderWorkflow",
        {"thread_id": thread_id, "owner": owner, "thread_task_queue": settings.task_queue},
        id=f"team-order-{thread_id}",
        task_queue=team_queue,
        result_type=dict,
    )
    await alive_while(
        process,
        until(client, thread_id, delivered(1), seconds=START_WITHIN),
        START_WITHIN + 10,
        "the team's workflow asking in its thread",
        log,
    )
    notes = random.Random(thread_id).randbytes(ANSWER_CHARS // 2).hex()
    answer = {"notes": notes}
    async with httpx.AsyncClient(base_url=roomy, timeout=60) as http:
        [question] = (await hydrate(http, thread_id, **{"X-Principal": owner}))["interrupts"][
            "pending"
        ]
        assert question["message"] == "Any notes for the courier?"
        done = await run(
            http, thread_id, agent="inbox", principal=owner, resume=[resolve(question, answer)]
        )
    assert finished(done)["outcome"] == {"type": "success"}
    result = await alive_while(
        process, order.result(), HEARD_WITHIN, "the team's workflow hearing its answer", log
    )
    assert result == {"status": "resolved", "payload": answer}
    assert len(result["payload"]["notes"]) == ANSWER_CHARS == len(notes.encode())


async def test_the_installed_cli_starts_and_its_gateway_serves_the_ui_it_carries(
    installed: Install, client: Client, tmp_path: Path
):
    usage = await execute(
        installed.bin / "ag-ui-temporal",
        "--help",
        cwd=installed.project,
        env=installed.env(),
        within=START_WITHIN,
        what="ag-ui-temporal --help",
    )
    assert all(command in usage for command in ("dev", "worker", "gateway", "approvals"))

    port, log = free_port(), tmp_path / "gateway.stderr"
    env = installed.env(
        TEMPORAL_ADDRESS=client.service_client.config.target_host,
        DATA_DIR=str(tmp_path),
        GATEWAY_PORT=str(port),
    )
    with log.open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            installed.bin / "ag-ui-temporal",
            "gateway",
            cwd=installed.project,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=stderr,
        )
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:

            async def listening() -> None:
                while True:
                    try:
                        if (await http.get("/healthz")).status_code == 200:
                            return
                    except httpx.TransportError:  # not listening yet
                        pass
                    await asyncio.sleep(0.1)

            await alive_while(process, listening(), START_WITHIN, "ag-ui-temporal gateway", log)
            page = await http.get("/")
        if (PACKAGED_WEB / "index.html").is_file():  # built, so the wheel carries it
            assert page.status_code == 200
            assert page.text == (PACKAGED_WEB / "index.html").read_text()
        else:
            assert page.status_code == 404 and "make web" in page.text
    finally:
        await stop(process, signal.SIGINT)
