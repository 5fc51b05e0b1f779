"""Every module the package installs, by import name: what the layout and entry point tests
read."""

from __future__ import annotations

import os
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
