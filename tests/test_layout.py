"""The layout the README promises: the gateway reaches the workers only through the
contract, and modules stay small enough to read at once."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.modules import package_modules

MAX_LINES = 330
"""Roughly 300 lines (more, now that imports name the package): a module past this wants
splitting."""


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
        f"{module}: {name}"
        for module, path in package_modules().items()
        if module.startswith("ag_ui_temporal.gateway")
        for name in _imported(path)
        if name.startswith("ag_ui_temporal.workflows")
        and not name.startswith("ag_ui_temporal.workflows.contract")
    }
    assert not crossing, sorted(crossing)


def test_the_contract_imports_nothing_of_ours_but_itself() -> None:
    leaks = {
        f"{module}: {name}"
        for module, path in package_modules().items()
        if module.startswith("ag_ui_temporal.workflows.contract")
        for name in _imported(path)
        if name.startswith("ag_ui_temporal")
        and not name.startswith("ag_ui_temporal.workflows.contract")
    }
    assert not leaks, sorted(leaks)


def test_no_module_is_much_over_300_lines() -> None:
    long = {
        module: lines
        for module, path in package_modules().items()
        if "migrations" not in module and (lines := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long, long
