"""Every module the package installs, by import name: what the layout and entry point tests
read."""

from __future__ import annotations

import ast
import os
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "ag_ui_temporal"


def package_modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for folder, dirs, files in os.walk(ROOT / PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            parts = (Path(folder) / name).relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = Path(folder) / name
    return found


@cache
def parsed(path: Path) -> ast.Module:
    """`path`'s syntax tree, parsed once per session: the layout tests walk every module many
    times (a tree is only read, never changed).

    CPython 3.11 (this machine has 3.11.7) counts the AST constructor's recursion in state every
    thread shares: a parse while another thread compiles (a test's Temporal worker importing a
    module into a workflow's sandbox, in the same process) can fail with "AST constructor
    recursion depth mismatch" (python/cpython#106905). The same parse again succeeds."""
    text = path.read_text()
    for _ in range(PARSE_ATTEMPTS - 1):
        try:
            return ast.parse(text)
        except SystemError:
            continue
    return ast.parse(text)


PARSE_ATTEMPTS = 5
