"""The image installs the project with `pip install .`: every package must be listed."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_is_installed_by_pip_install_dot():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in ROOT.glob("**/__init__.py")
        if init.parent.relative_to(ROOT).parts[0] not in {"tests", "bench", ".venv", "web"}
        and "node_modules" not in init.parts
    }
    assert on_disk == set(config["packages"])
    modules = {path.stem for path in ROOT.glob("*.py")}
    assert modules == set(config["py-modules"])
