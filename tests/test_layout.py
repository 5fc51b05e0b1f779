"""The layout the README promises: one import root, rooms by feature, imports that run one
way, and private modules that stay in their room."""

from __future__ import annotations

import ast
import os
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.modules import PACKAGE, ROOT, package_modules, parsed

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
    "workflows", "gateway", "settings", "store", "cli", "examples", "observability",
    "temporal_client", "durations", "worker_health", "worker", "demo",
)  # fmt: skip
"""Names this repository once installed at the top level: nothing may import them bare. (Its
`agents` too, but that is the OpenAI Agents SDK's name now: `ag_ui_temporal.agents` imports it.)"""

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
    for node in ast.walk(parsed(path)):
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


def _python_files(top: Path) -> Iterator[Path]:
    """The `.py` files under `top`, its node_modules skipped, not walked (tens of thousands of
    files: walking them took most of this module's time)."""
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d != "node_modules"]
        yield from (Path(folder) / name for name in files if name.endswith(".py"))


def test_nothing_imports_a_bare_top_level_name_of_ours() -> None:
    sources = [
        path for folder in ("tests", "bench", "docs") for path in _python_files(ROOT / folder)
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


# -- one owner for an interrupt's life, one place for each rule ----------------------------

LIFE_OWNER = f"{PACKAGE}.workflows.thread.interrupts"
LIFE_FIELDS = {
    "status", "run_id", "lapsed", "resolution", "resolved_by_run", "resolved_by",
    "resolved_via", "resolved_at",
}  # fmt: skip
"""An interrupt's state as the thread keeps it: changed only by `InterruptRecord`'s methods."""


def _assigned_attributes(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, attribute) of every `x.attr = ...` but `self.attr` (an object's own field)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        while targets:
            target = targets.pop()
            if isinstance(target, ast.Tuple | ast.List):
                targets.extend(target.elts)
            elif isinstance(target, ast.Attribute) and not (
                isinstance(target.value, ast.Name) and target.value.id == "self"
            ):
                yield node.lineno, target.attr


def test_an_interrupts_life_changes_only_in_its_owner() -> None:
    """Every transition of an interrupt (asked, offered, delivered, answered, expired,
    withdrawn) is a method of `thread.interrupts.InterruptRecord`, which lists the states in
    its docstring: no other module of the thread sets its status, its binding or its answer."""
    modules = package_modules()
    assert LIFE_OWNER in modules
    elsewhere = [
        f"{module}:{line} sets .{attribute}"
        for module, path in modules.items()
        if module.startswith(f"{PACKAGE}.workflows.thread") and module != LIFE_OWNER
        for line, attribute in _assigned_attributes(parsed(path))
        if attribute in LIFE_FIELDS
    ]
    assert not elsewhere, elsewhere


ONE_PLACE = {
    "an interrupt's life (its states and transitions)": (LIFE_OWNER, "InterruptRecord"),
    "when an interrupt expires": (f"{PACKAGE}.workflows.contract.view", "InterruptView.due"),
    "when a standing decision lapses": (
        f"{PACKAGE}.workflows.contract.standing", "StandingDecision.stands",
    ),
    "how an interrupt is built": (f"{PACKAGE}.workflows._interrupt", "new_interrupt"),
    "the interrupt's fields an agent may set": (
        f"{PACKAGE}.workflows.contract.interrupts", "InterruptFields",
    ),
    "how an approval's answer reads": (f"{PACKAGE}.workflows.contract.tools", "approval"),
    "how long a tool may run": (f"{PACKAGE}.workflows.contract.runs", "TOOL_TIMEOUT"),
    "how often a tool is tried": (f"{PACKAGE}.workflows.contract.runs", "TOOL_MAX_ATTEMPTS"),
    "the thread's owner check, in the workflow": (
        f"{PACKAGE}.workflows.thread._resume", "check_owner",
    ),
    "who may do what on a thread, in the gateway": (f"{PACKAGE}.gateway.access", "Access"),
    "the marker of a filled snapshot": (
        f"{PACKAGE}.workflows.contract.transcript", "filled_marker",
    ),
}  # fmt: skip
"""Each rule two parts must agree on, and the one module that defines it."""


def _definitions(tree: ast.Module) -> Iterator[str]:
    """The names a module defines at its top level, and its classes' methods as `C.m`."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node.name
        elif isinstance(node, ast.ClassDef):
            yield node.name
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield f"{node.name}.{item.name}"
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            yield from (t.id for t in targets if isinstance(t, ast.Name))


@pytest.mark.parametrize("rule", list(ONE_PLACE))
def test_each_rule_is_defined_in_one_place(rule: str) -> None:
    home, name = ONE_PLACE[rule]
    defined_in = [
        module
        for module, path in package_modules().items()
        if name in set(_definitions(parsed(path)))
    ]
    assert defined_in == [home], f"{rule}: {name} defined in {defined_in}"


def _reads_a_deadline(node: ast.AST) -> bool:
    """`datetime.fromisoformat(<...expires_at...>)`: an interrupt's deadline, parsed."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "fromisoformat"
        and any("expires_at" in ast.unparse(arg) for arg in node.args)
    )


def test_only_the_expiry_rule_compares_a_deadline_with_the_time() -> None:
    """Expiry is decided once (`InterruptView.due`): nothing else in the package compares an
    interrupt's `expires_at` with a time (a link page and the thread used to, each its way);
    a standing decision's, once too (`StandingDecision.stands`)."""
    homes = {
        ONE_PLACE[rule][0]
        for rule in ("when an interrupt expires", "when a standing decision lapses")
    }
    elsewhere = [
        f"{module}:{node.lineno}"
        for module, path in package_modules().items()
        if module not in homes
        for node in ast.walk(parsed(path))
        if isinstance(node, ast.Compare)
        and any(_reads_a_deadline(part) for part in [node.left, *node.comparators])
    ]
    assert not elsewhere, elsewhere
