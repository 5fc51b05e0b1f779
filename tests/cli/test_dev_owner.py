"""`make run` owns its server: `ag-ui-temporal dev` killed with SIGKILL takes its embedded
Temporal server with it, and the next `dev` on the same data directory comes up on the same
ports with the paused run still there to resume. A server a dead `dev` left running is ended
by the next one on that directory, and only that server; a second `dev` on a directory is
refused, naming the first."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ag_ui_temporal.cli.dev_owner import LOCK_FILE, owned
from ag_ui_temporal.cli.dev_server import server_command
from ag_ui_temporal.settings import Settings
from tests.agui import interrupts, resolve, run, texts
from tests.cli.test_dev_stop import HANG_GUARD, DevPorts, dev_stack
from tests.conftest import free_port, steady_port

EMAIL = "Send an email to ada@example.com saying hi"


async def test_a_killed_dev_takes_its_server_along_and_the_next_one_resumes_the_run(
    tmp_path: Path,
):
    ports = DevPorts(steady_port(), steady_port(), steady_port())  # the second dev's too
    async with dev_stack(tmp_path, 0, ports=ports, log_name="first.log") as first:
        [pending] = interrupts(await run(first.http, "t-killed", text=EMAIL))
        os.kill(first.process.pid, signal.SIGKILL)  # no handler runs: nothing is stopped
        assert await asyncio.wait_for(first.process.wait(), HANG_GUARD) == -signal.SIGKILL
        assert await first.server_gone()  # the kernel ended it with its parent

    # the same directory (tmp_path/.data) and the same ports
    async with dev_stack(tmp_path, 0, ports=ports, log_name="second.log") as second:
        done = await run(second.http, "t-killed", resume=[resolve(pending, {"approved": True})])
        assert "Sent the email to ada@example.com" in texts(done)
        second.ctrl_c()
        assert await second.exit_code() == 0
    assert json.loads((tmp_path / ".data" / LOCK_FILE).read_text()) == {
        "dev": second.process.pid
    }  # the server it recorded, stopped


def left_running(settings: Settings) -> subprocess.Popen[bytes]:
    """The embedded server of `settings` as a `dev` that died everywhere else would leave it:
    running in a session of its own, recorded in its data directory's lock file."""
    settings.data_dir.mkdir(parents=True)
    argv = server_command(settings)
    server = subprocess.Popen(argv, start_new_session=True, stdout=subprocess.DEVNULL)
    record = {"dev": 2**22 + 1, "server": {"pid": server.pid, "argv": argv}}
    (settings.data_dir / LOCK_FILE).write_text(json.dumps(record))
    return server


def dev_settings(data_dir: Path) -> Settings:
    return Settings(
        data_dir=data_dir,
        dev_server_address=f"127.0.0.1:{free_port()}",
        dev_server_ui_port=free_port(),
    )


def test_the_server_a_dead_dev_left_is_ended_and_never_another(tmp_path: Path):
    ours = dev_settings(tmp_path / "ours")
    server = left_running(ours)
    theirs = dev_settings(tmp_path / "theirs")
    other = left_running(theirs)
    # a record in a third directory naming their server (a copy of their directory), and one
    # whose pid is now another program's
    copied = tmp_path / "copied"
    copied.mkdir()
    (copied / LOCK_FILE).write_text((theirs.data_dir / LOCK_FILE).read_text())
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    reused = tmp_path / "reused"
    reused.mkdir()
    record = {"server": {"pid": stranger.pid, "argv": server_command(dev_settings(reused))}}
    (reused / LOCK_FILE).write_text(json.dumps(record))
    try:
        with owned(ours.data_dir):
            assert server.wait(HANG_GUARD) is not None  # ended before anything starts
        for directory in (copied, reused):
            with owned(directory):
                pass
        assert other.poll() is None and stranger.poll() is None  # never signalled
        with owned(theirs.data_dir):  # their own directory: theirs is ended
            assert other.wait(HANG_GUARD) is not None
    finally:
        for process in (server, other, stranger):
            if process.poll() is None:
                process.kill()
                process.wait()


def test_a_second_dev_on_a_directory_is_refused_naming_the_first(tmp_path: Path):
    with owned(tmp_path):
        with pytest.raises(SystemExit) as refused, owned(tmp_path):
            pass
    said = str(refused.value.code)
    assert said == (
        f"ag-ui-temporal dev cannot start: another `ag-ui-temporal dev` (pid {os.getpid()})"
        f" runs on DATA_DIR={tmp_path.resolve()}. Stop it, or give this one a directory of its"
        " own: DATA_DIR=... (or --data-dir ...)"
    )
    with owned(tmp_path):  # the first one's end released it
        pass
