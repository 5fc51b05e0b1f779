"""`ag-ui-temporal dev` as a person runs it (`make run`): the Temporal UI it advertises
answers, it says where each part of the stack is, its options override their settings, and
a port it cannot have or an embedded server that stops stops it with the reason in words."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from ag_ui_temporal.cli import main
from ag_ui_temporal.cli.dev import where
from ag_ui_temporal.cli.dev_server import DEV_SERVER_CONFIG
from ag_ui_temporal.settings import Settings
from tests.agui import interrupts, run
from tests.cli.test_dev_stop import BIN, HANG_GUARD, dev_env, dev_stack, streaming_run
from tests.conftest import free_port

UP = "ag-ui-temporal dev is up"


async def test_make_runs_temporal_ui_answers_dev_says_where_everything_is_and_ctrl_c_stops_it(
    tmp_path: Path,
):
    """One stack, as a person uses it: what `dev` says and serves, then Ctrl-C with a parked
    thread and a run whose model is still streaming to an open event stream
    (tests/cli/test_dev_stop.py: the stack stops in order, exits 0 and leaves no server)."""
    ui, not_this_one = free_port(), free_port()
    # the option wins over the environment; a run's text streams for seconds (word_delay)
    async with dev_stack(
        tmp_path, 0.2, "--dev-server-ui-port", str(ui), DEV_SERVER_UI_PORT=not_this_one
    ) as dev:
        async with asyncio.timeout(HANG_GUARD):
            while UP not in dev.log.read_text():  # said once the gateway takes connections
                await asyncio.sleep(0.1)
        said = dev.log.read_text()
        gateway = f"http://127.0.0.1:{dev.gateway_port}"
        assert f"web UI + AG-UI  {gateway}\n" in said
        assert f"AG-UI agents    {gateway}/agents/{{agent}}\n" in said
        assert f"Temporal UI     http://127.0.0.1:{ui}\n" in said
        assert f"Temporal gRPC   127.0.0.1:{dev.temporal_port}  (embedded: " in said
        assert f"store           {tmp_path / '.data' / 'store.sqlite3'}  (SQLite)" in said

        async with httpx.AsyncClient(timeout=30) as http:
            page = await http.get(f"http://127.0.0.1:{ui}/")
            assert page.status_code == 200
            assert page.headers["content-type"].startswith("text/html")
            assert "<!doctype html>" in page.text.lower()
            with pytest.raises(httpx.TransportError):  # the environment's port was overridden
                await http.get(f"http://127.0.0.1:{not_this_one}/")

        [server] = [c for c in children(dev.process.pid) if "start-dev" in c]
        assert "--headless" not in server
        for value in DEV_SERVER_CONFIG:  # the bench's transfer-queue poll rate
            assert f"--dynamic-config-value {value}" in " ".join(server)

        email = "Send an email to ada@example.com saying hi"
        [parked] = interrupts(await run(dev.http, "t-parked", text=email))
        assert parked["reason"] == "tool_call"
        lines = streaming_run(dev.http)
        async for line in lines:
            if "TEXT_MESSAGE_CONTENT" in line:  # the model's activity is mid-response
                break

        dev.ctrl_c()
        with contextlib.suppress(httpx.TransportError):  # cut once STREAMS_DRAIN is over
            async for _ in lines:  # the gateway ends (or closes) the stream as it stops
                pass
        assert await dev.exit_code() == 0
        assert await dev.server_gone()


def children(pid: int) -> list[list[str]]:
    """The command lines of `pid`'s child processes (Linux's /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            # `pid (comm) state ppid ...`: comm may hold spaces, so split after its `)`
            if int(stat.read_text().rpartition(")")[2].split()[1]) == pid:
                found.append((stat.parent / "cmdline").read_bytes().decode().split("\0"))
    return found


@contextlib.contextmanager
def taken() -> Iterator[int]:
    """A port something else listens on, as long as the block lasts."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_taken_ports_are_named_before_anything_starts(tmp_path: Path):
    with taken() as gateway, taken() as grpc, taken() as ui:
        env = dev_env(GATEWAY_PORT=gateway, DEV_SERVER_ADDRESS=f"127.0.0.1:{grpc}")
        done = subprocess.run(
            [BIN / "ag-ui-temporal", "dev", "--dev-server-ui-port", str(ui)],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=HANG_GUARD,
        )  # fmt: skip
    assert done.returncode == 1
    said = done.stderr
    assert "ag-ui-temporal dev cannot start:" in said
    assert f"the gateway (web UI + AG-UI): port {gateway} is taken" in said
    assert f"GATEWAY_PORT={gateway + 1} (or --gateway-port {gateway + 1})" in said
    assert f"the embedded Temporal server (gRPC): port {grpc} is taken" in said
    assert f"DEV_SERVER_ADDRESS=127.0.0.1:{grpc + 1}" in said
    assert f"or, if it is Temporal, use it: TEMPORAL_ADDRESS=127.0.0.1:{grpc}" in said
    assert f"its Temporal UI: port {ui} is taken" in said
    assert f"DEV_SERVER_UI_PORT={ui + 1}" in said
    made = {path.name for path in (tmp_path / ".data").iterdir()}
    assert made == {"dev.lock"}  # no server was started, no store made: the lock alone


def test_a_server_that_stops_at_start_is_reported_with_what_it_said(tmp_path: Path):
    (tmp_path / ".data" / "temporal.sqlite").mkdir(parents=True)  # no file it can open
    env = dev_env(
        GATEWAY_PORT=free_port(), DEV_SERVER_ADDRESS=f"127.0.0.1:{free_port()}",
        DEV_SERVER_UI_PORT=free_port(),
    )  # fmt: skip
    done = subprocess.run(
        [BIN / "ag-ui-temporal", "dev"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=HANG_GUARD,
    )  # fmt: skip
    assert done.returncode == 1
    said = done.stderr.strip().splitlines()
    assert said[-2].startswith(
        "ag-ui-temporal dev: the embedded Temporal server stopped before it answered"
        " (exit code 1), saying:"
    )
    assert "unable to open database file" in said[-1]


def test_dev_help_lists_each_option_and_its_setting(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as stopped:
        main(["dev", "--help"])
    assert stopped.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())
    for option, setting in [
        ("--gateway-host HOST", "GATEWAY_HOST; default 127.0.0.1"),
        ("--gateway-port PORT", "GATEWAY_PORT; default 8000"),
        ("--dev-server-address HOST:PORT", "DEV_SERVER_ADDRESS; default 127.0.0.1:7233"),
        ("--dev-server-ui-port PORT", "DEV_SERVER_UI_PORT; default 8233"),
        ("--temporal-address HOST:PORT", "TEMPORAL_ADDRESS; unset: the embedded one"),
        ("--data-dir DIR", "DATA_DIR; default .data"),
    ]:
        assert option in shown and setting in shown


def test_a_malformed_address_option_is_refused(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as stopped:
        main(["dev", "--dev-server-address", "7233"])
    assert stopped.value.code == 2
    assert "'7233' is not HOST:PORT" in capsys.readouterr().err


def test_dev_on_someone_elses_server_says_so_and_hides_the_store_password(tmp_path: Path):
    settings = Settings(
        temporal_address="temporal.example:7233",
        gateway_host="0.0.0.0",  # reached on loopback
        gateway_port=8000,
        web_dist=tmp_path,  # no index.html: no web UI built
        database_url=SecretStr("postgresql+asyncpg://agui:s3cret@db.example/agui"),
    )
    said = where(settings, embedded=False)
    assert "web UI + AG-UI  http://127.0.0.1:8000  (AG-UI only: `make web` builds the UI)" in said
    assert "Temporal UI     the one of the server at TEMPORAL_ADDRESS" in said
    assert "Temporal gRPC   temporal.example:7233  (TEMPORAL_ADDRESS: none started)" in said
    assert "store           postgresql+asyncpg://agui:***@db.example/agui" in said
    assert "s3cret" not in said
