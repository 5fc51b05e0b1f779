"""`ag-ui-temporal dev` owns its data directory and the embedded server it starts there.

- One `dev` at a time on a data directory: it holds an exclusive `flock` on `DATA_DIR/dev.lock`
  while it runs, which the kernel releases however the process dies (Ctrl-C, `kill -9`, the
  OOM killer). A second `dev` on the same directory is refused, naming the first.
- The lock file records the embedded server's pid and command line. A `dev` that died
  without stopping its server left that record behind: the next `dev` on the directory ends
  the process, and only when it is still that server (its command line, which names this
  directory's SQLite file by its absolute path, is the one recorded), so a pid the system
  gave to another program since is never signalled, nor another directory's server.
- On Linux the server also dies with `dev` (`PR_SET_PDEATHSIG`: the kernel sends it SIGTERM
  when `dev` dies, whatever killed it), so the record is the fallback of other platforms
  and of a server still stopping when the next `dev` starts.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

log = logging.getLogger("ag-ui-temporal")

LOCK_FILE = "dev.lock"
ENDING_WITHIN = 10.0
"""Seconds a left-behind server has to stop on SIGTERM before it is sent SIGKILL."""
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


class DataDirectory:
    """The held lock of a data directory, and the record of the server started there."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd

    def server_started(self, pid: int, argv: list[str]) -> None:
        """Record the embedded server: what the next `dev` ends if this one dies first."""
        self._write({"dev": os.getpid(), "server": {"pid": pid, "argv": argv}})

    def server_stopped(self) -> None:
        self._write({"dev": os.getpid()})

    def _write(self, record: dict[str, Any]) -> None:
        data = json.dumps(record).encode()
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)


@contextlib.contextmanager
def owned(data_dir: Path) -> Iterator[DataDirectory]:
    """`data_dir`, locked for this `dev` while the block runs, with the server a dead `dev`
    left running there ended first; SystemExit naming the other `dev` if one runs there."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir.resolve()
    fd = os.open(path / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        if not _locked(fd):
            holder = _read(fd).get("dev")
            by = f" (pid {holder})" if isinstance(holder, int) else ""
            raise SystemExit(
                f"ag-ui-temporal dev cannot start: another `ag-ui-temporal dev`{by} runs on"
                f" DATA_DIR={path}. Stop it, or give this one a directory of its own:"
                " DATA_DIR=... (or --data-dir ...)"
            )
        left = _read(fd).get("server")
        if isinstance(left, dict):
            end_left_behind(left, path)
        directory = DataDirectory(path, fd)
        directory.server_stopped()  # no server yet; this `dev` holds the directory
        yield directory
    finally:
        os.close(fd)  # releases the lock (so does any death of the process)


def _locked(fd: int) -> bool:
    try:
        import fcntl
    except ImportError:  # Windows: no flock; one `dev` a directory is up to the person
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _read(fd: int) -> dict[str, Any]:
    raw = os.pread(fd, 1 << 16, 0)
    try:
        record = json.loads(raw) if raw.strip() else {}
    except ValueError:  # not ours to make sense of: nothing is ended on its word
        return {}
    return record if isinstance(record, dict) else {}


def end_left_behind(record: dict[str, Any], data_dir: Path) -> None:
    """End the server `record` names if it still runs as that server on `data_dir`'s file."""
    pid, argv = record.get("pid"), record.get("argv")
    if not isinstance(pid, int) or not isinstance(argv, list) or pid <= 0:
        return
    if str(data_dir / "temporal.sqlite") not in argv or not is_running_as(pid, argv):
        return  # gone, or its pid is another program's now: never signalled
    log.info(
        "ending the embedded Temporal server (pid %d) a previous `ag-ui-temporal dev` left"
        " running on %s", pid, data_dir,
    )  # fmt: skip
    for sig, within in ((signal.SIGTERM, ENDING_WITHIN), (signal.SIGKILL, ENDING_WITHIN)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if not is_running_as(pid, argv):
                return
            time.sleep(0.05)
    raise SystemExit(
        f"ag-ui-temporal dev cannot start: the Temporal server (pid {pid}) a previous `dev` left"
        f" running on DATA_DIR={data_dir} does not stop"
    )


def is_running_as(pid: int, argv: list[str]) -> bool:
    """Whether process `pid` runs, with exactly `argv` as its command line (a zombie has
    none: it holds no port and no file)."""
    if Path("/proc/self/cmdline").exists():  # Linux
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            return cmdline.split(b"\0")[:-1] == [a.encode() for a in argv]
        except OSError:  # gone
            return False
    try:  # macOS and other BSDs: ps prints the arguments space-joined
        shown = subprocess.run(
            ["ps", "-p", str(pid), "-o", "command="], capture_output=True, text=True, timeout=5
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return False
    return shown == " ".join(argv)


def die_with_parent() -> Callable[[], None] | None:
    """A `preexec_fn` that has the kernel send the child SIGTERM when this process dies
    (Linux's `PR_SET_PDEATHSIG`); None elsewhere. Everything it calls is looked up here,
    before the fork: the child only makes the system call."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    parent = os.getpid()
    sigterm = int(signal.SIGTERM)

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, sigterm)
        if os.getppid() != parent:  # the parent died before the call: nobody will tell us
            os.kill(os.getpid(), sigterm)

    return preexec
