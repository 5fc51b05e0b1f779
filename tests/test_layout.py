"""The layout the README promises: the gateway reaches the workers only through the
contract, and modules stay small enough to read at once."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("gateway", "workflows", "cli", "store", "observability", "examples")
TOP_LEVEL = ("worker.py", "worker_health.py", "settings.py", "temporal_client.py", "durations.py")
MAX_LINES = 320
"""Roughly 300 lines: a module past this wants splitting."""


def _modules() -> list[Path]:
    found = [ROOT / name for name in TOP_LEVEL]
    for folder in SOURCES:
        found += sorted(p for p in (ROOT / folder).rglob("*.py") if "migrations" not in p.parts)
    return found


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_the_gateway_imports_only_the_contract_from_workflows() -> None:
    crossing = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in (ROOT / "gateway").rglob("*.py")
        for name in _imported(path)
        if name.split(".")[0] == "workflows" and not name.startswith("workflows.contract")
    }
    assert not crossing, sorted(crossing)


def test_the_contract_imports_nothing_of_ours_but_itself() -> None:
    ours = ("gateway", "workflows", "cli", "store", "settings", "worker", "observability")
    leaks = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in (ROOT / "workflows" / "contract").glob("*.py")
        for name in _imported(path)
        if name.split(".")[0] in ours and not name.startswith("workflows.contract")
    }
    assert not leaks, sorted(leaks)


def test_no_module_is_much_over_300_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in _modules()
        if (lines := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long, long
