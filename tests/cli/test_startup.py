"""A process that cannot start says why in one line on stderr, naming the setting to change,
and exits non-zero at once: no traceback (unless `--debug` / `AGUI_DEBUG=1`), no interpreter
abort, no 30 s wait on a refused connection. `AGENT_MODULES` finds a team's modules in the
folder the command runs in. Each command's `--help` lists its options and the settings it
reads (cli/reasons.py has the exit codes: 2 a setting is wrong as written, 1 otherwise)."""

from __future__ import annotations

import argparse
import asyncio
import fnmatch
import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from temporalio.client import Client

from ag_ui_temporal.cli import READS, main, parser
from ag_ui_temporal.cli.dev_server import wait_for_temporal
from ag_ui_temporal.settings import Settings, get_settings
from tests.cli.test_dev import taken
from tests.cli.test_dev_stop import BIN, HANG_GUARD
from tests.conftest import free_port

# what a person's shell could hold that would change what these processes do
OURS = ("TEMPORAL_ADDRESS", "DATABASE_URL", "AGENT_MODULES", "LLM_MODEL", "AGUI_DEBUG")


@dataclass
class Ended:
    code: int
    said: list[str]
    """stderr's lines but the logs (JSON objects, with `LOG_FORMAT=json`)."""
    stderr: str


def command(argv: list[str], cwd: Path, **settings: str) -> Ended:
    """`ag-ui-temporal argv` in `cwd` with `settings` over a clean environment: how it ended.
    The timeout is a hang guard, nothing more."""
    env = {k: v for k, v in os.environ.items() if k not in OURS}
    env |= {"DATA_DIR": str(cwd / ".data"), "LOG_FORMAT": "json", **settings}
    done = subprocess.run(
        [str(BIN / "ag-ui-temporal"), *argv], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=HANG_GUARD,
    )  # fmt: skip
    said = [line for line in done.stderr.splitlines() if line and not line.startswith("{")]
    return Ended(done.returncode, said, done.stderr)


def one_line(ended: Ended, process: str, code: int) -> str:
    """The line `process` said, checked to be all it said, and how it exited."""
    assert ended.code == code, ended.stderr
    assert len(ended.said) == 1, ended.stderr
    assert "Traceback" not in ended.stderr and "Fatal Python error" not in ended.stderr
    [line] = ended.said
    assert re.match(f"ag-ui-temporal {process}( cannot start)?: ", line), line
    return line


def refused_address() -> str:
    return f"127.0.0.1:{free_port()}"  # nothing listens there


def test_a_missing_agent_module_is_named_before_the_worker_connects(client: Client, tmp_path: Path):
    """With Temporal there (the worker used to connect, then fail its clean-up with an
    UnboundLocalError 40 lines below the cause)."""
    address = client.service_client.config.target_host
    ended = command(["worker"], tmp_path, TEMPORAL_ADDRESS=address, AGENT_MODULES='["my_graph"]')
    line = one_line(ended, "worker", 2)
    assert line == (
        "ag-ui-temporal worker: AGENT_MODULES: no module 'my_graph' in the working directory"
        f" ({tmp_path}) or the installed packages"
    )


def test_a_model_that_cannot_be_built_is_named(client: Client, tmp_path: Path):
    address = client.service_client.config.target_host
    demo = '["ag_ui_temporal.demo.agents"]'  # an agent on LLM_MODEL: the demo's assistant
    ended = command(
        ["worker"], tmp_path, TEMPORAL_ADDRESS=address, LLM_MODEL="nope:gpt", AGENT_MODULES=demo
    )
    line = one_line(ended, "worker", 2)
    assert line.startswith("ag-ui-temporal worker: LLM_MODEL='nope:gpt' cannot be used: ")


def test_a_module_failing_on_import_is_named_with_where(tmp_path: Path):
    (tmp_path / "broken_agents.py").write_text("import os\n\nraise RuntimeError('no key')\n")
    ended = command(["gateway"], tmp_path, AGENT_MODULES='["broken_agents"]')
    line = one_line(ended, "gateway", 2)
    assert line == (
        "ag-ui-temporal gateway: AGENT_MODULES: importing 'broken_agents' failed: RuntimeError:"
        f" no key ({tmp_path / 'broken_agents.py'}, line 3)"
    )


def at_once(*runs: tuple[list[str], Path, dict[str, str]]) -> list[Ended]:
    """`command(argv, cwd, **settings)` for each run, the processes side by side (each in a
    folder of its own: a worker makes its development audit key in `DATA_DIR`)."""
    for _, cwd, _ in runs:
        cwd.mkdir()
    with ThreadPoolExecutor(len(runs)) as pool:
        return list(pool.map(lambda run: command(run[0], run[1], **run[2]), runs))


def test_a_refused_temporal_address_is_said_at_once(tmp_path: Path):
    processes = ["worker", "gateway", "dev"]
    address = refused_address()
    settings = {"TEMPORAL_ADDRESS": address}
    ended = at_once(
        *(([p], tmp_path / p, settings | {"GATEWAY_PORT": str(free_port())}) for p in processes)
    )
    for process, each in zip(processes, ended, strict=True):
        line = one_line(each, process, 1)
        assert line.startswith(
            f"ag-ui-temporal {process}: no Temporal server answers at {address}"
            " (TEMPORAL_ADDRESS): nothing listens there (connection refused)"
        )


def test_debug_adds_the_traceback(tmp_path: Path):
    address = refused_address()
    flagged, by_variable = at_once(
        (["worker", "--debug"], tmp_path / "flag", {"TEMPORAL_ADDRESS": address}),
        (["worker"], tmp_path / "variable", {"TEMPORAL_ADDRESS": address, "AGUI_DEBUG": "1"}),
    )
    assert flagged.code == 1
    assert "Traceback (most recent call last)" in flagged.stderr
    assert flagged.said[-1].startswith("ag-ui-temporal worker: no Temporal server answers at")
    assert "Traceback (most recent call last)" in by_variable.stderr


async def test_dev_does_not_wait_for_a_server_that_refuses():
    """`within` an hour: waiting it out would meet the hang guard."""
    settings = Settings(temporal_address=refused_address())
    with pytest.raises(SystemExit, match=r"\(TEMPORAL_ADDRESS\): nothing listens there"):
        async with asyncio.timeout(HANG_GUARD):
            await wait_for_temporal(settings, within=3600)


def test_a_taken_gateway_port_is_named(tmp_path: Path):
    with taken() as port:
        ended = command(["gateway"], tmp_path, GATEWAY_PORT=str(port))
    line = one_line(ended, "gateway", 1)
    assert line == (
        f"ag-ui-temporal gateway cannot start: the gateway (web UI + AG-UI): port {port} is taken:"
        f" something else (another `make run`?) listens on 127.0.0.1:{port}. Stop it, or move"
        f" this one: GATEWAY_PORT={port + 1}"
    )


def test_a_team_module_in_the_working_directory_is_found(tmp_path: Path):
    """As uvicorn and celery find an app: the console script's own folder is not the team's."""
    (tmp_path / "my_graph.py").write_text(
        "from pydantic_ai import Agent\n"
        "from pydantic_ai.models.test import TestModel\n"
        "from ag_ui_temporal.agents import ThreadDeps, register, thread_capabilities\n"
        "register(Agent(TestModel(), name='team', deps_type=ThreadDeps,\n"
        "               capabilities=thread_capabilities()))\n"
    )
    ended = command(["tools", "team"], tmp_path, AGENT_MODULES='["my_graph"]')
    assert ended.code == 0, ended.stderr


# -- settings that do not parse: said before anything runs (in this process) -----------------


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Iterator[object]:
    """`main([...])` here, with `env` set: (its exit code, what it said on stderr)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level

    def run(argv: list[str], **env: str) -> tuple[int, str]:
        for name in OURS:
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        get_settings.cache_clear()
        with pytest.raises(SystemExit) as stopped:
            main(argv)
        code = stopped.value.code
        assert isinstance(code, int)
        return code, capsys.readouterr().err

    yield run
    get_settings.cache_clear()
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("my_graph", "AGENT_MODULES is not valid JSON: a list is written as JSON, e.g."
                     " AGENT_MODULES='[\"my_agents\", \"team.support\"]'"),
        ('["my_graph.py"]', "AGENT_MODULES: 'my_graph.py' is a file: name its module, 'my_graph'"),
        ('["my_graph:graph"]', "'my_graph:graph': name the module alone, 'my_graph'"),
        ('["my graph"]', "'my graph' is no module name (e.g. my_agents.support)"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("process", ["worker", "gateway", "dev"])
def test_a_malformed_agent_modules_names_the_setting_and_its_form(
    cli, process: str, value: str, said: str
):
    code, err = cli([process], AGENT_MODULES=value)
    assert code == 2
    assert err.startswith(f"ag-ui-temporal {process}: ") and err.count("\n") == 1, err
    assert said in err and "AGENT_MODULES" in err


def test_a_malformed_database_url_is_named_and_not_repeated(cli):
    code, err = cli(["migrate"], DATABASE_URL="postgres://agui:s3cret@db:5432")
    assert (code, err) == (
        2,
        "ag-ui-temporal migrate: DATABASE_URL: the store runs on PostgreSQL"
        " (postgresql+asyncpg://user:password@host/db) or SQLite\n",
    )
    code, err = cli(["migrate"], DATABASE_URL="s3cret")
    assert code == 2 and "DATABASE_URL: not a database URL" in err and "s3cret" not in err


def test_a_store_that_refuses_is_named(cli):
    url = f"postgresql+asyncpg://agui:s3cret@127.0.0.1:{free_port()}/agui"
    code, err = cli(["migrate"], DATABASE_URL=url)
    assert code == 1 and err.count("\n") == 1, err
    assert err.startswith(
        f"ag-ui-temporal migrate: the store at {url.replace('s3cret', '***')} (DATABASE_URL)"
        " cannot be used: "
    )
    assert "s3cret" not in err


# -- --help ---------------------------------------------------------------------------------


@pytest.mark.parametrize("process", ["worker", "gateway"])
def test_help_lists_the_options_and_the_settings_read(
    process: str, capsys: pytest.CaptureFixture[str]
):
    with pytest.raises(SystemExit) as stopped:
        main([process, "--help"])
    assert stopped.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "--debug" in shown and "AGUI_DEBUG=1" in shown
    for setting in ("TEMPORAL_ADDRESS", "AGENT_MODULES", "LLM_MODEL", "DATABASE_URL"):
        assert setting in shown, setting
    assert "Exit codes: 0 done, 1 failed, 2 a setting or option is wrong." in shown


def test_the_parser_loads_no_command(tmp_path: Path):
    """Every process builds the parser, and `--help` is all it runs: neither loads what one
    command needs (the gateway's FastAPI, the store's SQLAlchemy and Alembic, httpx)."""
    heavy = ("fastapi", "sqlalchemy", "alembic", "httpx")
    code = (
        "import sys; from ag_ui_temporal.cli import parser; parser();"
        f" print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
        timeout=HANG_GUARD,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_every_setting_is_read_by_a_command_and_every_name_listed_is_one():
    names = [name.upper() for name in Settings.model_fields]
    listed = set()
    for reads in READS.values():
        for pattern in reads:
            matched = fnmatch.filter(names, pattern)
            assert matched, pattern
            listed.update(matched)
    assert sorted(set(names) - listed) == []
    [commands] = [a for a in parser()._actions if isinstance(a, argparse._SubParsersAction)]
    assert set(READS) == set(commands.choices)
