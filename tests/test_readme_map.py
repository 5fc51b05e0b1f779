"""README.md's "Map of the code" stays true to the tree: it names every room, every package
directory and every module of `ag_ui_temporal` (private ones may share a line), and every
path it names exists.

The map is a tree of lines. A line starts with the names it describes, one space apart and
relative to the directory it is in (two spaces deeper than that directory's line), then two
spaces or more and what they are; a line indented deeper than that continues the one above.
A `name.py` or `name/` in a description counts too, relative to the line's directory (inside
the directory a line names, if it names one) or to one of its parents.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.modules import PACKAGE, ROOT, package_modules
from tests.test_layout import ROOMS

README = ROOT / "README.md"
HEADING = "## Map of the code"
NAME = re.compile(r"(?<![\w./*-])\w[\w.-]*(?:/[\w.-]+)*/?(?![\w/*])")
"""A path-like word in a description; only those ending in `.py` or `/` are checked."""
UNLISTED = ("__init__.py", "__main__.py")
"""Named by their directory's line."""
REVISIONS = ROOT / PACKAGE / "store" / "migrations" / "versions"
"""One module per schema revision: the map names the directory only."""


@dataclass(frozen=True)
class Named:
    line: int
    """README.md's line number."""
    text: str
    candidates: tuple[Path, ...]
    """Where the name may point, the first that exists wins."""

    def path(self) -> Path | None:
        return next((path for path in self.candidates if exists(path)), None)


def exists(path: Path) -> bool:
    return any(path.parent.glob(path.name)) if "*" in path.name else path.exists()


def map_lines(text: str) -> list[tuple[int, str]]:
    """The lines of the fenced block under the map's heading, with their line numbers."""
    lines = text.splitlines()
    start = lines.index(HEADING)
    fence = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
    end = next(i for i in range(fence + 1, len(lines)) if lines[i].startswith("```"))
    return [(number + 1, lines[number]) for number in range(fence + 1, end)]


def parse(lines: list[tuple[int, str]]) -> list[Named]:
    """Every name the map gives, at the start of a line or in a description."""
    named: list[Named] = []
    open_dirs: list[tuple[int, Path]] = [(-2, ROOT)]
    context = ROOT
    for number, line in lines:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        description = line
        if indent % 2 == 0 and indent <= open_dirs[-1][0] + 2:
            while open_dirs[-1][0] >= indent:
                open_dirs.pop()
            parent = open_dirs[-1][1]
            names, *rest = re.split(r"\s{2,}", line.strip(), maxsplit=1)
            description = rest[0] if rest else ""
            dirs = []
            for name in names.split(" "):
                named.append(Named(number, name, (parent / name,)))
                if name.endswith("/"):
                    dirs.append(parent / name)
            context = dirs[0] if len(dirs) == 1 else parent
            if len(dirs) == 1:
                open_dirs.append((indent, dirs[0]))
        for word in NAME.findall(description):
            word = word.rstrip(".")
            if word.endswith((".py", "/")):
                places = (context, *context.parents)
                named.append(Named(number, word, tuple(place / word for place in places)))
    return named


def required() -> dict[Path, str]:
    """Every package directory and listed module, by real path, with what to call it."""
    found: dict[Path, str] = {}
    for path in package_modules().values():
        real = path.resolve()
        if real.name == "__init__.py":
            found[real.parent] = f"{real.parent.relative_to(ROOT)}/"
        elif real.name not in UNLISTED and real.parent != REVISIONS:
            found[real] = str(real.relative_to(ROOT))
    for dotted, room in ROOMS.items():
        where = ROOT.joinpath(*dotted.split("."))
        for real in (where.resolve(), where.with_suffix(".py").resolve()):
            if real in found:
                found[real] += f" (room `{room}`, {dotted})"
    return found


def test_every_name_in_the_map_exists():
    stale = [
        f"README.md:{name.line}: `{name.text}` (no {name.candidates[0].relative_to(ROOT)})"
        for name in parse(map_lines(README.read_text()))
        if name.path() is None
    ]
    assert not stale, "README's map names what is not there; fix or drop:\n" + "\n".join(stale)


def test_the_map_names_every_room_directory_and_module():
    named = {
        path.resolve() for name in parse(map_lines(README.read_text())) if (path := name.path())
    }
    missing = [what for path, what in required().items() if path not in named]
    assert not missing, (
        "README's map (## Map of the code) leaves out these; add each to its directory's "
        "lines (private modules may share a line):\n" + "\n".join(missing)
    )


def test_the_map_parser_reads_names_descriptions_and_continuations():
    lines = [
        "tests/           what is tested (fixtures in conftest.py)",
        "  workflows/ gateway/  replays; the edge",
        "  test_*.py        more; continued, in gone.py",
        "                   test_docs.py and nothing/ at all",
        "docs/",
        "  gen_settings.py  writes settings",
    ]
    found = [(name.text, name.path()) for name in parse(list(enumerate(lines, 1)))]
    assert found == [
        ("tests/", ROOT / "tests/"),
        ("conftest.py", ROOT / "tests" / "conftest.py"),
        ("workflows/", ROOT / "tests" / "workflows"),
        ("gateway/", ROOT / "tests" / "gateway"),
        ("test_*.py", ROOT / "tests" / "test_*.py"),
        ("gone.py", None),
        ("test_docs.py", ROOT / "tests" / "test_docs.py"),
        ("nothing/", None),
        ("docs/", ROOT / "docs"),
        ("gen_settings.py", ROOT / "docs" / "gen_settings.py"),
    ]
