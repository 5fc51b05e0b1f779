"""The layout the README promises: one import root, rooms by feature, imports that run one
way, and private modules that stay in their room."""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.modules import PACKAGE, ROOT, package_modules

ROOMS = {
    PACKAGE: "door",
    f"{PACKAGE}.langgraph": "door",
    f"{PACKAGE}.plugin": "plugin",
    f"{PACKAGE}.payloads": "payloads",
    f"{PACKAGE}.settings": "settings",
    f"{PACKAGE}.durations": "settings",
    f"{PACKAGE}.store": "store",
    f"{PACKAGE}.notify": "notify",
    f"{PACKAGE}.audit": "audit",
    f"{PACKAGE}.workflows.notices": "notices",
    f"{PACKAGE}.observability": "observability",
    f"{PACKAGE}.temporal_client": "temporal_client",
    f"{PACKAGE}.workflows.contract": "protocol",
    f"{PACKAGE}.workflows": "workflows",
    f"{PACKAGE}.agents": "agents",
    f"{PACKAGE}.workflows.thread": "thread",
    f"{PACKAGE}.workflows.producers": "producers",
    f"{PACKAGE}.workflows.chains": "chains",
    f"{PACKAGE}.demo": "demo",
    f"{PACKAGE}.examples": "examples",
    f"{PACKAGE}.gateway": "gateway",
    f"{PACKAGE}.gateway.tanstack": "tanstack",
    f"{PACKAGE}.worker": "worker",
    f"{PACKAGE}.worker_plugin": "worker",
    f"{PACKAGE}.worker_health": "worker",
    f"{PACKAGE}.heartbeats": "worker",
    f"{PACKAGE}.cli": "cli",
    f"{PACKAGE}.console": "console",
}
"""Each module's room: the longest of these names that it is, or is inside of.
`workflows` is what every workflow room shares (ids, patches, the interrupt, schemas)."""

MAY_IMPORT = {
    "protocol": set(),
    "settings": {"protocol"},
    "store": {"settings", "protocol"},
    "observability": {"settings"},
    "payloads": {"protocol"},
    "temporal_client": {"settings", "observability", "protocol", "payloads"},
    "notify": {"protocol", "workflows", "settings", "store"},
    "notices": {"protocol", "workflows"},
    "audit": {"protocol", "store"},
    "workflows": {"protocol"},
    "agents": {"protocol", "settings"},
    "thread": {"protocol", "workflows", "agents", "store"},
    "producers": {"protocol", "workflows", "thread", "settings", "notify"},
    "chains": {"protocol", "workflows", "thread", "producers", "notices", "settings"},
    "demo": {"protocol", "workflows", "agents", "thread", "producers", "chains", "settings",
             "store"},
    "tanstack": {"protocol"},
    "gateway": {"protocol", "tanstack", "agents", "settings", "store", "observability",
                "temporal_client", "notify"},
    "plugin": {"payloads"},
    "worker": {"protocol", "workflows", "agents", "thread", "producers", "chains", "settings",
               "store", "observability", "temporal_client", "plugin", "notify", "notices",
               "audit"},
    "examples": {"protocol", "agents", "thread", "producers", "chains", "settings",
                 "temporal_client", "worker", "demo"},
    "cli": {"protocol", "agents", "gateway", "worker", "examples", "settings", "store",
            "observability", "temporal_client", "notify"},
    "console": {"cli"},
    "door": {"protocol", "agents", "thread", "producers", "chains", "plugin", "store", "worker"},
}  # fmt: skip
"""The rooms each room may import: protocol <- agents <- thread <- producers <- chains; the
demo builds on them, the library never on the demo, which a process serves only when
`AGENT_MODULES` names it (an example may: the LangGraph one asks about the demo's
`sendEmail`, whose schema the web UI's tool hashes, and sends through its activity, which
takes the thread's `ToolCallInput`); the gateway reaches the workers only through the
protocol."""

TOP_LEVEL = (
    "agents", "workflows", "gateway", "settings", "store", "cli", "examples", "observability",
    "temporal_client", "durations", "worker_health", "worker", "demo",
)  # fmt: skip
"""Names this repository once installed at the top level: nothing may import them bare."""

WARN_LINES = 320
"""Past roughly 300 lines a module is worth a look; a concept is never split for a count."""


def room(module: str) -> str:
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        if (name := ".".join(parts[:end])) in ROOMS:
            return ROOMS[name]
    raise AssertionError(f"{module} is in no room: add it to ROOMS")


def imports(path: Path) -> Iterator[str]:
    """Every module `path` imports, at any depth (`from a import b` yields `a` and `a.b`)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def ours(module: str) -> bool:
    return module == PACKAGE or module.startswith(f"{PACKAGE}.")


def private_owner(module: str) -> str | None:
    """The package a private module (`_name`) belongs to, or None for a public one."""
    parts = module.split(".")
    for index, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:index])
    return None


def test_every_module_is_in_a_room_and_imports_only_the_rooms_below() -> None:
    crossing = sorted(
        f"{module} ({room(module)}) -> {name} ({room(name)})"
        for module, path in package_modules().items()
        for name in imports(path)
        if ours(name) and room(name) != room(module)
        and room(name) not in MAY_IMPORT[room(module)]
    )  # fmt: skip
    assert not crossing, "\n".join(crossing)


def test_the_rooms_form_no_cycle() -> None:
    """The allowed imports are a layering, so the actual ones (a subset) are too."""
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, " -> ".join((*path, name))
        if name not in done:
            for below in MAY_IMPORT[name]:
                visit(below, (*path, name))
            done.add(name)

    for name in MAY_IMPORT:
        visit(name, ())


def test_no_private_module_is_imported_from_outside_its_package() -> None:
    """`_name` is private to the package it is in (and that package's subpackages)."""
    leaks = sorted(
        f"{module} -> {name}"
        for module, path in package_modules().items()
        for name in imports(path)
        if ours(name) and (owner := private_owner(name)) is not None
        and not module.startswith(f"{owner}.") and module != owner
    )  # fmt: skip
    assert not leaks, "\n".join(leaks)


def test_nothing_imports_a_bare_top_level_name_of_ours() -> None:
    sources = [
        path
        for folder in ("tests", "bench", "docs")
        for path in (ROOT / folder).rglob("*.py")
        if "node_modules" not in path.parts
    ]
    bare = sorted(
        f"{path.relative_to(ROOT)}: {name}"
        for path in [*package_modules().values(), *sources]
        for name in imports(path)
        if name.split(".")[0] in TOP_LEVEL
    )
    assert not bare, "\n".join(bare)


def test_the_package_is_the_only_top_level_python_of_the_repository() -> None:
    """Besides the tests, benchmark and docs, and the card's `workflows/`, `gateway/` and
    `worker.py`: links to the package's own, which no tool needs to follow."""
    for name in ("workflows", "gateway", "worker.py"):
        link = ROOT / name
        assert link.is_symlink() and link.resolve() == ROOT / PACKAGE / name, link
    inside = [path for path in (ROOT / PACKAGE).rglob("*") if path.is_symlink()]
    assert not inside, inside  # one tree: every file of the package is in it
    others = {
        path.name
        for path in ROOT.iterdir()
        if (path.suffix == ".py" or (path / "__init__.py").exists())
        and path.name not in ("workflows", "gateway", "worker.py", PACKAGE, "tests", "bench")
    }
    assert not others, others


class LongModule(UserWarning):
    """Shown in pytest's warnings summary, never an error."""


@pytest.mark.filterwarnings("default::tests.test_layout.LongModule")
def test_a_long_module_is_only_a_warning() -> None:
    for module, path in package_modules().items():
        if (lines := len(path.read_text().splitlines())) > WARN_LINES:
            warnings.warn(f"{module}: {lines} lines", LongModule, stacklevel=1)
