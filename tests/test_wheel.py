"""What each layer of `pip install` gives a team (docs/operations.md#installing): the wheel
built from this checkout, installed with its dependencies from the package index in three
fresh venvs, built side by side:

- `lowest`: the core alone (no extra), each of its requirements at the lowest version its
  range allows (`temporalio`, `pydantic`, ... pinned at their floors in pyproject.toml);
- `highest`: the core alone at the newest versions the index has in range, beside OpenAI's
  `openai-agents` (import name `agents`), installed by pip itself, as the docs' `pip install
  ag-ui-temporal` does;
- `served`: the core with the `server` extra, then with `langgraph`, `openai-agents` and
  `google-adk` added (the three frameworks side by side).

pip installs `highest`; uv builds the wheel and installs `lowest` and `served` (uv installs
what pip would, from the same sources, in seconds where pip takes a minute or more). uv
reads none of pip's configuration, so it is given the index, find-links, constraints and
certificate this machine's pip uses (`pip config list`: its files and `PIP_*` variables),
and picks the best version across all of them, as pip does. What pip and uv each resolved
is asserted where it is the claim: the floors on `lowest`, versions in range on `highest`.

On each, `from ag_ui_temporal import *` works and every name of each door's `__all__`
imports; what needs an extra that is not installed says which. On both core installs a
team's project whose modules are named as Temporal's samples name them (`workflows.py`,
`settings.py`, `worker.py`) keeps them; its worker (a process of the venv whose client is
given only `plugins=[AgUiTemporalPlugin()]`) runs a workflow that pauses in a thread with
`ask_in_thread` and gets back exactly the 100 KiB answer a person gave through the gateway.
The core install adds one import package (`ag_ui_temporal`) and one script
(`ag-ui-temporal`), none of the server's stack, and `import agents` is still OpenAI's. On the
served install the CLI starts, and its gateway serves at `/` the UI the wheel carries (or,
built without one, says how to get it); a team's `mcp<2` beside the server extra is refused by
the installer (our MCP toolsets speak mcp 2).

The threads' worker and the gateway the person answers through are the test stack's
(tests/conftest.py); only the team's worker and the installed gateway run from the venvs,
on the same Temporal server. Installing takes a while, so the module shares its venvs.
Without a reachable package index the install fails every test here, with the installer's
words.
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
import tomllib
import uuid
import zipfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from packaging.requirements import Requirement
from packaging.version import Version
from temporalio.client import Client
from temporalio.worker import Worker

import ag_ui_temporal
from ag_ui_temporal.settings import PACKAGED_WEB, Settings
from tests.agui import finished, resolve, run
from tests.conftest import free_port, serve_gateway
from tests.modules import PACKAGE, ROOT
from tests.test_producers import delivered, hydrate, until
from tests.uv_pip import UV, PipsSources

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
        return {
            "status": outcome.status,
            "payload": outcome.payload,
            "principal": outcome.principal,
            "via": outcome.via,
        }
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


PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
CORE = [Requirement(text) for text in PROJECT["dependencies"]]


def floors() -> dict[str, str]:
    """Each core requirement's lowest allowed version (its `>=`), by distribution name."""
    return {
        req.name: next(spec.version for spec in req.specifier if spec.operator == ">=")
        for req in CORE
    }


SERVER_ONLY = ("fastapi", "sqlalchemy", "pydantic-ai-slim", "mcp", "uvicorn", "apprise")
"""Distributions the server extra brings and the core must not."""


@dataclass(frozen=True)
class Install:
    venv: Path
    project: Path
    """The team's project: its own workflows.py, settings.py and worker.py."""
    site_packages: Path
    versions: dict[str, str]
    """Every distribution installed in the venv, by normalized name."""
    doors: dict[str, Any]
    """What `IMPORT_THE_DOORS` found on the install (on `served`: before `langgraph`)."""

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    def env(self, **extra: str) -> dict[str, str]:
        return venv_environ(self.venv, **extra)


def venv_environ(venv: Path, **extra: str) -> dict[str, str]:
    """The environment of a process of `venv`: nothing of the checkout's on its path, the
    installed UI (no WEB_DIST), and bytecode written. The venvs are installed without
    compiling (most of what they hold is never imported), so the first process to import a
    module compiles it; with PYTHONDONTWRITEBYTECODE set (as on this machine) every process
    would compile all it imports again, twice the CPU of the imports themselves."""
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "WEB_DIST", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return {**env, "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", **extra}


@dataclass(frozen=True)
class Installs:
    wheel: Path
    lowest: Install
    highest: Install
    served: Install
    """The server extra, with `langgraph`, `openai-agents` and `google-adk` added after its
    `doors` were read."""
    langgraph: dict[str, Any]
    """What `IMPORT_THE_DOORS` found on `served` with `langgraph`, `openai-agents` and
    `google-adk`."""


async def run_to_end(
    *command: str | Path, cwd: Path, within: float, env: dict[str, str] | None = None, what: str
) -> tuple[int, str, str]:
    """Run `command` to its end: its exit status, stdout and stderr."""
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
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def execute(
    *command: str | Path, cwd: Path, within: float, env: dict[str, str] | None = None, what: str
) -> str:
    """Run `command` to its end; its stdout, or a failure that quotes its stderr."""
    status, out, err = await run_to_end(*command, cwd=cwd, within=within, env=env, what=what)
    assert status == 0, f"{what} exited {status}:\n{err[-4000:]}"
    return out


def source_tree(dest: Path) -> Path:
    """What `pip install .` reads, copied: pyproject.toml and the package (its `web/` too, when
    `make web` built it). A build in the checkout would reuse its `build/` folder, whose stale
    files end up in the wheel, and share it with any other build at the same time."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, dest / name)
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / PACKAGE, dest / PACKAGE, ignore=skip)
    return dest


IMPORT_THE_DOORS = """
    import importlib, json
    from ag_ui_temporal import *
    import ag_ui_temporal

    found = {"all": ag_ui_temporal.__all__, "star": sorted(n for n in dir() if n[0] != "_")}
    found["needs"] = {}  # the names (and doors) that need an extra: what they say instead
    for name in [*ag_ui_temporal._WHERE, *ag_ui_temporal.MOVED]:
        try:
            getattr(ag_ui_temporal, name)
        except ImportError as err:
            found["needs"][name] = str(err)
    for extra in ("langgraph", "openai_agents", "adk"):
        try:
            door = importlib.import_module(f"ag_ui_temporal.{extra}")
            exec(f"from ag_ui_temporal.{extra} import *")
            found[extra] = [getattr(door, name) is not None for name in door.__all__]
        except ImportError as err:
            found["needs"][f"ag_ui_temporal.{extra}"] = str(err)
    print(json.dumps(found))
"""


async def in_venv(install: Install | Path, *code: str, cwd: Path | None = None) -> Any:
    """The JSON that `code`, run by the venv's Python (in the team's project), prints."""
    venv = install.venv if isinstance(install, Install) else install
    out = await execute(
        venv / "bin" / "python",
        "-c",
        "\n".join(textwrap.dedent(block) for block in code),
        cwd=cwd or (install.project if isinstance(install, Install) else venv),
        env=venv_environ(venv),
        within=START_WITHIN,
        what="the venv's python",
    )
    return json.loads(out.splitlines()[-1])  # the last line: whatever an import printed before


Installer = Callable[..., Awaitable[None]]
"""Installs `*requirements` into a venv: `(venv, *requirements, what=...)`."""


async def pip_install(venv: Path, *requirements: str | Path, what: str) -> None:
    """Into `venv` (made without pip: this process's pip installs into it), without compiling
    every module of every package: a process compiles what it imports."""
    await execute(
        sys.executable,
        "-m",
        "pip",
        "--python",
        venv / "bin" / "python",
        "install",
        "--quiet",
        "--no-compile",
        *requirements,
        cwd=venv.parent,
        within=INSTALL_WITHIN,
        what=f"pip install of {what} (its dependencies come from the package index: is it "
        "reachable?)",
    )


@dataclass(frozen=True)
class Uv:
    """uv, building and installing from the sources pip is configured with."""

    sources: PipsSources

    async def build(self, source: Path, wheels: Path) -> Path:
        """The wheel of `source`, built by its backend (setuptools) in an isolated
        environment, as `pip wheel` does."""
        await execute(
            UV, "build", "--quiet", "--wheel", "--python", sys.executable,
            *self.sources.options(constraints="--build-constraints"), "--out-dir", wheels, source,
            cwd=source.parent, env=self.sources.env(), within=BUILD_WITHIN,
            what="uv build of the checkout (setuptools comes from the package index: is it "
            "reachable?)",
        )  # fmt: skip
        [wheel] = wheels.glob("ag_ui_temporal-*.whl")
        return wheel

    async def install(self, venv: Path, *requirements: str | Path, what: str) -> None:
        """`pip_install`'s, by uv: the same resolution, from the same sources."""
        await execute(
            UV, "pip", "install", "--quiet", "--python", venv / "bin" / "python",
            *self.sources.options(), *requirements,
            cwd=venv.parent, env=self.sources.env(), within=INSTALL_WITHIN,
            what=f"uv pip install of {what} (its dependencies come from the package index: is "
            "it reachable?)",
        )  # fmt: skip


async def venv_with(
    root: Path, project: Path, install: Installer, *requirements: str | Path, what: str
) -> Install:
    """A fresh venv (without pip), `requirements` installed by `install`."""
    venv = root / what
    await execute(
        UV, "venv", "--quiet", "--no-config", "--python", sys.executable, venv, cwd=root,
        within=BUILD_WITHIN, what="uv venv",
    )  # fmt: skip
    await install(venv, *requirements, what=what)
    found = await in_venv(
        venv,
        """
    import importlib.metadata, json, sysconfig
    print(json.dumps({
        "site": sysconfig.get_path("purelib"),
        "versions": {d.metadata["Name"].lower().replace("_", "-"): d.version
                     for d in importlib.metadata.distributions()},
    }))
    """,
    )
    doors = await in_venv(venv, IMPORT_THE_DOORS, cwd=project)
    return Install(venv, project, Path(found["site"]), found["versions"], doors)


@pytest.fixture(scope="module")
async def installs(tmp_path_factory: pytest.TempPathFactory) -> Installs:
    """The wheel, built from a copy of this checkout; the team's project; the three venvs."""
    root = tmp_path_factory.mktemp("wheel")
    uv = Uv(await asyncio.to_thread(PipsSources.read))
    wheel = await uv.build(source_tree(root / "source"), root / "wheels")
    project = root / "team"
    project.mkdir()
    for name, text in TEAM_FILES.items():
        (project / name).write_text(textwrap.dedent(text).lstrip())
    lowest = [f"{name}=={version}" for name, version in floors().items()]

    async def served() -> tuple[Install, dict[str, Any]]:
        install = await venv_with(root, project, uv.install, f"{wheel}[server]", what="served")
        # the three frameworks' doors, side by side
        extras = f"{wheel}[langgraph,openai-agents,google-adk]"
        await uv.install(install.venv, extras, what="langgraph")
        return install, await in_venv(install, IMPORT_THE_DOORS)

    low, high, (server, langgraph) = await asyncio.gather(
        venv_with(root, project, uv.install, wheel, *lowest, what="lowest"),
        venv_with(root, project, pip_install, wheel, "openai-agents", what="highest"),
        served(),
    )
    return Installs(wheel, low, high, server, langgraph)


LANGGRAPH = "the langgraph extra: pip install 'ag-ui-temporal[langgraph]'"
OPENAI_AGENTS = "the openai-agents extra: pip install 'ag-ui-temporal[openai-agents]'"
GOOGLE_ADK = "the google-adk extra: pip install 'ag-ui-temporal[google-adk]'"
SERVER = "the server extra: pip install 'ag-ui-temporal[server]'"


def test_the_core_installs_at_either_end_of_its_ranges_and_without_the_server(
    installs: Installs,
):
    low, high = installs.lowest.versions, installs.highest.versions
    assert {name: Version(low[name]) for name in floors()} == {
        name: Version(floor) for name, floor in floors().items()
    }
    for req in CORE:
        assert high[req.name] in req.specifier, (req, high[req.name])
    newer = [
        name for name in ("temporalio", "pydantic") if Version(high[name]) > Version(low[name])
    ]
    assert newer == ["temporalio", "pydantic"]  # two ends, not one version twice
    # (`highest` has openai-agents beside it, which brings an MCP client and a server of its own)
    assert not {*SERVER_ONLY} & set(installs.lowest.versions)
    assert {*SERVER_ONLY} <= set(installs.served.versions)


async def test_a_teams_mcp_1_is_refused_at_install_not_met_at_import(installs: Installs):
    """pydantic-ai's fastmcp range admits mcp 1, where what `mcp_server` speaks (mcp 2's
    `mcp_types`) does not exist: the server extra asks for mcp 2, so a team's `mcp<2` (one
    that `temporalio-strands-agents` 0.1 brings) is the installer's refusal, not an
    ImportError at the first MCP toolset."""
    sources = await asyncio.to_thread(PipsSources.read)
    status, _, err = await run_to_end(
        UV, "pip", "install", "--dry-run", "--python", installs.served.venv / "bin" / "python",
        *sources.options(), f"{installs.wheel}[server]", "mcp<2",
        cwd=installs.served.venv.parent, env=sources.env(), within=INSTALL_WITHIN,
        what="uv pip install --dry-run of the server extra beside mcp<2",
    )  # fmt: skip
    assert status != 0
    assert "No solution found" in err and "mcp>=2,<3" in err, err[-2000:]


@pytest.mark.parametrize("layer", ["lowest", "highest", "served", "langgraph"])
def test_every_install_imports_all_it_advertises_and_names_the_extra_for_the_rest(
    installs: Installs, layer: str
):
    found = installs.langgraph if layer == "langgraph" else getattr(installs, layer).doors
    core = list(ag_ui_temporal.__all__)
    assert found["all"] == core and set(core) <= set(found["star"])  # `import *` works
    server = {n for n, where in ag_ui_temporal._WHERE.items() if where in ag_ui_temporal.EXTRAS}
    moved = {
        name: f"ag_ui_temporal.{name} is in ag_ui_temporal.langgraph, with {LANGGRAPH}"
        for name in ag_ui_temporal.MOVED
    }
    served = layer in ("served", "langgraph")
    needs = {} if served else {name: f"ag_ui_temporal.{name} needs {SERVER}" for name in server}
    if layer == "langgraph":  # with the openai-agents and google-adk extras too
        assert found["langgraph"] == [True] * len(ag_ui_temporal.MOVED)
        assert found["openai_agents"] == [True]
        assert found["adk"] == [True, True]
    else:
        needs["ag_ui_temporal.langgraph"] = f"ag_ui_temporal.langgraph needs {LANGGRAPH}"
        needs["ag_ui_temporal.openai_agents"] = (
            f"ag_ui_temporal.openai_agents needs {OPENAI_AGENTS}"
        )
        needs["ag_ui_temporal.adk"] = f"ag_ui_temporal.adk needs {GOOGLE_ADK}"
    assert found["needs"] == {**needs, **moved}


async def test_every_public_name_imports_beside_the_teams_own_modules(installs: Installs):
    install = installs.highest
    found = await in_venv(
        install,
        """
    import json, settings, worker, workflows
    import ag_ui_temporal
    from ag_ui_temporal import AgUiTemporalPlugin, ask_in_thread
    print(json.dumps({
        "door": ag_ui_temporal.__file__,
        "team": [m.__file__ for m in (settings, worker, workflows)],
        "ask": workflows.ask_in_thread is ask_in_thread,
        "plugin": worker.AgUiTemporalPlugin is AgUiTemporalPlugin,
    }))
    """,
    )
    assert Path(found["door"]) == install.site_packages / PACKAGE / "__init__.py"
    team = [install.project / name for name in ("settings.py", "worker.py", "workflows.py")]
    assert [Path(f) for f in found["team"]] == team  # the team's, not anything installed
    assert found["ask"] and found["plugin"]


async def test_agents_is_still_openais(installs: Installs):
    install = installs.highest
    found = await in_venv(
        install,
        """
    import importlib.metadata, json
    import ag_ui_temporal, agents
    print(json.dumps({
        "file": agents.__file__,
        "names": [hasattr(agents, "Agent"), hasattr(agents, "Runner")],
        "from": importlib.metadata.packages_distributions()["agents"],
    }))
    """,
    )
    assert Path(found["file"]) == install.site_packages / "agents" / "__init__.py"
    assert found["names"] == [True, True]
    assert found["from"] == ["openai-agents"]


async def test_the_install_adds_one_import_package_and_one_script(installs: Installs):
    install = installs.highest
    found = await in_venv(
        install,
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
        cwd=install.venv,
    )
    files = [Path(f) for f in found["files"]]
    in_site = {f.parts[0] for f in files if f.parts[0] != ".."}
    assert in_site == {PACKAGE, f"{PACKAGE}-{found['version']}.dist-info"}
    scripts = {(install.site_packages / f).resolve() for f in files if f.parts[0] == ".."}
    assert scripts == {(install.bin / "ag-ui-temporal").resolve()}
    assert found["top_level"] == found["claimed"] == [PACKAGE]
    assert found["scripts"] == ["ag-ui-temporal"]
    assert found["samples"] == []  # nothing installed takes the names a team's modules have


def test_the_wheel_carries_the_built_ui(installs: Installs):
    """Whatever `make web` built into the package is in the wheel (in CI, `make test` builds
    it first); nothing else of the UI."""
    with zipfile.ZipFile(installs.wheel) as wheel:
        carried = {n for n in wheel.namelist() if n.startswith(f"{PACKAGE}/web/")}
    built = {
        f"{PACKAGE}/web/{path.relative_to(PACKAGED_WEB).as_posix()}"
        for path in PACKAGED_WEB.rglob("*")
        if path.is_file()
    }
    assert carried == built


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


@asynccontextmanager
async def team_worker(
    install: Install, client: Client, queue: str, log: Path
) -> AsyncIterator[asyncio.subprocess.Process]:
    """`python worker.py` in the team's project, by the venv's Python, on the test stack's
    Temporal server."""
    env = install.env(
        TEMPORAL_ADDRESS=client.service_client.config.target_host,
        TEMPORAL_NAMESPACE=client.namespace,
        ORDERS_TASK_QUEUE=queue,
    )
    with log.open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            install.bin / "python",
            "worker.py",
            cwd=install.project,
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
        assert line.split() == [b"polling", queue.encode()]
        yield process
    finally:
        await stop(process, signal.SIGTERM)


@pytest.fixture(scope="module")
async def roomy(settings: Settings, client: Client, worker: Worker) -> AsyncIterator[str]:
    """The test stack's gateway, taking the 100 KiB answer."""
    update = {"max_payload_bytes": GATEWAY_LIMIT, "max_string_length": GATEWAY_LIMIT}
    async with serve_gateway(settings.model_copy(update=update), client) as url:
        yield url


@pytest.mark.parametrize("layer", ["lowest", "highest"])
async def test_the_teams_workflow_gets_a_100_kib_answer_given_through_the_gateway(
    installs: Installs,
    layer: str,
    roomy: str,
    client: Client,
    settings: Settings,
    thread_id: str,
    tmp_path: Path,
):
    """On the core install alone, at each end of its ranges."""
    install: Install = getattr(installs, layer)
    queue, log = f"team-orders-{uuid.uuid4().hex[:8]}", tmp_path / "worker.stderr"
    async with team_worker(install, client, queue, log) as process:
        owner = f"owner-{thread_id}"
        order = await client.start_workflow(
            "ShipOrderWorkflow",
            {"thread_id": thread_id, "owner": owner, "thread_task_queue": settings.task_queue},
            id=f"team-order-{thread_id}",
            task_queue=queue,
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
    assert result == {"status": "resolved", "payload": answer, "principal": owner, "via": "chat"}
    assert len(result["payload"]["notes"]) == ANSWER_CHARS == len(notes.encode())


async def test_the_cli_on_the_core_alone_names_the_extra_it_needs(installs: Installs):
    """The core carries the console script; without the server extra, one line and exit 2."""
    install = installs.lowest
    status, out, err = await run_to_end(
        install.bin / "ag-ui-temporal",
        "--help",
        cwd=install.project,
        env=install.env(),
        within=START_WITHIN,
        what="ag-ui-temporal --help on the core",
    )
    assert (status, out) == (2, "")
    [line] = err.splitlines()
    assert "pip install 'ag-ui-temporal[server]'" in line, line


async def test_the_installed_cli_starts_and_its_gateway_serves_the_ui_it_carries(
    installs: Installs, client: Client, tmp_path: Path
):
    install = installs.served
    usage = await execute(
        install.bin / "ag-ui-temporal",
        "--help",
        cwd=install.project,
        env=install.env(),
        within=START_WITHIN,
        what="ag-ui-temporal --help",
    )
    assert all(command in usage for command in ("dev", "worker", "gateway", "approvals"))

    port, log = free_port(), tmp_path / "gateway.stderr"
    env = install.env(
        TEMPORAL_ADDRESS=client.service_client.config.target_host,
        DATA_DIR=str(tmp_path),
        GATEWAY_PORT=str(port),
    )
    with log.open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            install.bin / "ag-ui-temporal",
            "gateway",
            cwd=install.project,
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
