"""`ag_ui_temporal` is the door: everything a user touches is importable from it (LangGraph's
names from their own door, `ag_ui_temporal.langgraph`), the docs import from nothing else, and
opening it loads none of the rooms behind it. Its `__all__` is what the core install imports
(tests/test_wheel.py imports it there)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys

import pytest

import ag_ui_temporal
import ag_ui_temporal.adk
import ag_ui_temporal.langgraph
import ag_ui_temporal.openai_agents
from ag_ui_temporal.agents import graphs
from tests.modules import ROOT, parsed
from tests.test_layout import TOP_LEVEL

DOOR = ROOT / "ag_ui_temporal" / "__init__.py"
DOORS = (
    "ag_ui_temporal",
    "ag_ui_temporal.langgraph",
    "ag_ui_temporal.openai_agents",
    "ag_ui_temporal.adk",
)


def _typed_names() -> set[str]:
    """The names the door's `if TYPE_CHECKING:` block imports (what mypy and editors see)."""
    tree = parsed(DOOR)
    block = next(node for node in tree.body if isinstance(node, ast.If))
    return {
        alias.asname or alias.name
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def test_every_public_name_is_exported_typed_and_found_where_the_door_says() -> None:
    public = set(ag_ui_temporal._WHERE)
    assert public == _typed_names()
    core = {n for n, where in ag_ui_temporal._WHERE.items() if where not in ag_ui_temporal.EXTRAS}
    assert len(ag_ui_temporal.__all__) == len(set(ag_ui_temporal.__all__))
    assert set(ag_ui_temporal.__all__) == core  # the names that need an extra are not in it
    assert set(ag_ui_temporal.EXTRAS.values()) == {"server"}
    for name in public:
        assert getattr(ag_ui_temporal, name) is not None, name
    assert public <= set(dir(ag_ui_temporal))
    assert sorted(dir(ag_ui_temporal)) == dir(ag_ui_temporal)


def test_langgraphs_names_are_in_their_own_door_and_the_root_says_where() -> None:
    moved = set(ag_ui_temporal.MOVED)
    assert moved == set(ag_ui_temporal.langgraph.__all__)
    assert not moved & (set(ag_ui_temporal._WHERE) | set(dir(ag_ui_temporal)))
    for name in ag_ui_temporal.langgraph.__all__:
        assert getattr(ag_ui_temporal.langgraph, name) is getattr(graphs, name)
        wanted = "pip install 'ag-ui-temporal[langgraph]'"
        said = f"ag_ui_temporal.{name} is in ag_ui_temporal.langgraph, with the langgraph extra: "
        with pytest.raises(ImportError) as raised:
            exec(f"from ag_ui_temporal import {name}", {})
        assert str(raised.value) == said + wanted


def test_the_openai_agents_door_names_the_registration() -> None:
    from ag_ui_temporal.agents import openai_agents

    assert ag_ui_temporal.openai_agents.__all__ == ["register_openai_agent"]
    registration = ag_ui_temporal.openai_agents.register_openai_agent
    assert registration is openai_agents.register_openai_agent


def test_the_adk_door_names_the_registration_and_the_model() -> None:
    from ag_ui_temporal.agents import adk_agents

    assert ag_ui_temporal.adk.__all__ == ["ThreadModel", "register_adk_agent"]
    assert ag_ui_temporal.adk.register_adk_agent is adk_agents.register_adk_agent
    assert ag_ui_temporal.adk.ThreadModel is adk_agents.ThreadModel


def test_opening_the_door_loads_no_room() -> None:
    """The sandbox imports the package for every workflow it starts: it must cost nothing."""
    code = (
        "import sys, ag_ui_temporal; "
        "print(sorted(m for m in sys.modules if m.startswith('ag_ui_temporal.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_docs_import_only_from_the_doors() -> None:
    """What a user copies from the docs names `ag_ui_temporal` (or `ag_ui_temporal.langgraph`)
    and nothing under it."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    imports = re.compile(r"^\s*(?:from|import)\s+([\w.]+)", re.MULTILINE)
    deeper = {
        f"{page.relative_to(ROOT)}: {name}"
        for page in pages
        for block in re.findall(r"```python\n(.*?)```", page.read_text(), re.DOTALL)
        for name in imports.findall(block)
        if (name.startswith("ag_ui_temporal.") and name not in DOORS)
        or name.split(".")[0] in TOP_LEVEL
    }
    assert not deeper, sorted(deeper)
