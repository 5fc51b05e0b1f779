"""uv, given the sources this machine's pip is configured with.

uv installs what pip would, from the same sources, in seconds where pip takes minutes, but it
reads none of pip's configuration (its files and `PIP_*` variables). `PipsSources` reads it
(`pip config list`) and hands it to uv. `make install` runs uv through this module (`python
-m tests.uv_pip install ...`); `tests/test_wheel.py` builds and installs its venvs with it.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from dataclasses import dataclass

from uv import find_uv_bin

UV = find_uv_bin()
PIP_SECTIONS = {"global": 0, "install": 1, ":env:": 2}
"""The sections of pip's configuration that `pip install` reads, the later winning."""
PIP_OPTIONS = {
    "index-url": "--index-url",
    "extra-index-url": "--extra-index-url",
    "find-links": "--find-links",
    "trusted-host": "--allow-insecure-host",
    "constraint": "--constraints",
}
"""pip's options that say where packages come from (each a list, space-separated), as uv's."""
PIP_VARIABLES = {
    "cert": ["SSL_CERT_FILE"],
    "client-cert": ["SSL_CLIENT_CERT"],
    "proxy": ["HTTPS_PROXY", "HTTP_PROXY"],
    "timeout": ["UV_HTTP_TIMEOUT"],
    "default-timeout": ["UV_HTTP_TIMEOUT"],
}
"""pip's options that say how it reaches them, as the variables uv reads."""
READ_WITHIN = 180.0
"""A bound, in seconds, on `pip config list` (a hang fails, not a timed assertion)."""


@dataclass(frozen=True)
class PipsSources:
    """Where this machine's pip gets packages from, for uv: pip's files and `PIP_*`
    variables, as `pip config list` shows them."""

    config: dict[str, str]
    """pip's options by name, each from the section of `PIP_SECTIONS` that wins."""

    @classmethod
    def read(cls) -> PipsSources:
        listed = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True, text=True, check=True, timeout=READ_WITHIN,
        ).stdout  # fmt: skip
        found: dict[str, tuple[int, str]] = {}
        for line in listed.splitlines():  # `global.find-links='/opt/wheels'`
            name, _, value = line.partition("=")
            section, _, option = name.partition(".")
            rank = PIP_SECTIONS.get(section, -1)
            if rank > found.get(option, (-1, ""))[0]:
                found[option] = (rank, ast.literal_eval(value))
        return cls({option: value for option, (_, value) in found.items()})

    def options(self, constraints: str = "--constraints") -> list[str]:
        """uv's options for pip's sources; pip takes the best version any of them has, and so
        does uv with `unsafe-best-match` (its default takes the first index that has a
        package, which could hide a newer version on another)."""
        options = ["--no-config", "--index-strategy", "unsafe-best-match"]
        for option, flag in PIP_OPTIONS.items():
            flag = constraints if option == "constraint" else flag
            for value in self.config.get(option, "").split():
                options += [flag, value]
        if self.config.get("no-index", "").lower() in ("1", "true", "yes", "on"):
            options.append("--no-index")
        return options

    def env(self) -> dict[str, str]:
        """This process's environment with pip's ways of reaching the index, and none of
        uv's own settings but its cache: pip's configuration is the one that counts. TLS
        trusts the system's certificates, as pip has by default since 24.2."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("UV_")}
        if "UV_CACHE_DIR" in os.environ:
            env["UV_CACHE_DIR"] = os.environ["UV_CACHE_DIR"]
        for option, names in PIP_VARIABLES.items():
            if option in self.config:
                env.update(dict.fromkeys(names, self.config[option]))
        return {**env, "UV_NATIVE_TLS": "1"}


def main(argv: list[str]) -> None:
    """`uv pip <command> <pip's sources> <argv's rest>`, in place of this process."""
    command, *rest = argv
    sources = PipsSources.read()
    os.execve(UV, [UV, "pip", command, *sources.options(), *rest], sources.env())


if __name__ == "__main__":
    main(sys.argv[1:])
