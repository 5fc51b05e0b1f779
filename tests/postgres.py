"""A throwaway PostgreSQL cluster for the tests: Debian's `postgresql` binaries, `initdb` in
a temp dir, a free port, sockets in the temp dir. Never the system's cluster, never a mock.

`initdb` refuses to run as root (CI runs as root): then the cluster runs as the `postgres`
system user, in a temp dir that user owns.

The temp dir is in memory (`/dev/shm`) where there is one: each database is a copy of
`template1` (~8 MB in ~300 files), so a session's cluster holds tens of thousands of files,
and on a disk mounted with `discard` removing them took 30 s at the session's end.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

USER = "postgres"
IN_MEMORY = Path("/dev/shm")


def binaries() -> Path | None:
    """The newest installed server's bin directory (`make test` installs `postgresql`)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_major)
    return Path(found[-1]).parent if found else None


def _major(path: str) -> int:
    return int(Path(path).parts[4])


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Cluster:
    """A running cluster on 127.0.0.1:`port`; `database()` creates an empty database in it."""

    def __init__(self, bin_dir: Path, root: Path) -> None:
        self.bin_dir, self.root, self.port = bin_dir, root, _free_port()
        self.data = root / "data"

    def _run(self, *args: str) -> None:
        as_user = ["runuser", "-u", USER, "--"] if os.geteuid() == 0 else []
        subprocess.run([*as_user, *args], check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        self._run(
            str(self.bin_dir / "initdb"), "-D", str(self.data), "-U", USER,
            "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync",
        )  # fmt: skip
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
            " -c max_wal_size=96MB"  # in memory: each new database's copy is WAL, recycled soon
        )
        self._run(
            str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-o", options,
            "-l", str(self.root / "server.log"), "-w", "start",
        )  # fmt: skip

    def stop(self) -> None:
        with contextlib.suppress(subprocess.SubprocessError):
            self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")

    def url(self, database: str) -> str:
        return f"postgresql+asyncpg://{USER}@127.0.0.1:{self.port}/{database}"

    def database(self) -> str:
        """A new, empty database; its SQLAlchemy URL."""
        name = f"t_{uuid.uuid4().hex[:12]}"
        createdb = str(self.bin_dir / "createdb")
        self._run(createdb, "-h", str(self.root), "-p", str(self.port), "-U", USER, name)
        return self.url(name)


@contextlib.contextmanager
def throwaway_cluster() -> Iterator[Cluster]:
    """Start a cluster in a new temp dir; stop it and remove the dir afterwards."""
    bin_dir = binaries()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL is not installed: `make test` installs `postgresql`")
    root = Path(tempfile.mkdtemp(prefix="agui-pg-", dir=IN_MEMORY if IN_MEMORY.is_dir() else None))
    if os.geteuid() == 0:
        shutil.chown(root, USER, USER)
    cluster = Cluster(bin_dir, root)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
