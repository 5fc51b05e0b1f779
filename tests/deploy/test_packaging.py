"""The image installs the project with `pip install '.[server]'`: one import package, every
part of it."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_is_installed_by_pip_install_dot():
    """setuptools finds `ag_ui_temporal` and every package under it, and installs nothing
    beside it."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["packages"]["find"]["include"] == ["ag_ui_temporal*"]
    assert "py-modules" not in config
    without_init = [
        folder
        for folder, dirs, files in os.walk(ROOT / "ag_ui_temporal")
        if any(name.endswith(".py") for name in files) and "__init__.py" not in files
    ]
    assert not without_init, without_init  # find_packages would leave them out
