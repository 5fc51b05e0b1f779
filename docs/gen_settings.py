"""Write docs/settings.md from the `Settings` class: `python -m docs.gen_settings`.

The page is generated so that it cannot drift from the code: each field's
environment variable, type and default come from the pydantic model, its text
from the string literal written under it in ag_ui_temporal/settings.py (pydantic does not keep
attribute docstrings here, so they are read with `ast`), and its section from
the comment block above the first field of a group. `--check` exits 1 when the
page on disk differs (tests/test_docs.py does the same).
"""

from __future__ import annotations

import ast
import inspect
import json
import sys
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo

import ag_ui_temporal.settings as settings_module
from ag_ui_temporal.settings import Settings

OUTPUT = Path(__file__).resolve().parent / "settings.md"
PACKAGE = Path(inspect.getfile(settings_module)).parent
COMMAND = "python -m docs.gen_settings"
GENERAL = "General"
TABLE_HEAD = ["| variable | type | default | meaning |", "|---|---|---|---|"]

HEADER = f"""<!-- Generated from ag_ui_temporal/settings.py by `{COMMAND}`: edit its docstrings. -->
# Settings

Every setting comes from the environment (or a `.env` file in the working
directory), read by one `pydantic-settings` class, `Settings` in `ag_ui_temporal/settings.py`.
Names are case-insensitive. Durations (`Duration`) are written `30s`, `5m`, `2h`,
`2d` or `250ms` (or seconds, or ISO 8601); lists are JSON (`["a", "b"]`);
*unset* means the variable is absent."""

_UNITS = (("d", 86400.0), ("h", 3600.0), ("m", 60.0), ("s", 1.0), ("ms", 0.001))
_BOUNDS = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<", "min_length": "min length"}


@dataclass
class Source:
    """What only the source text knows: the field's annotation, docstring and section."""

    annotation: str
    doc: str
    section: str | None
    intro: str


def _comment_above(lines: list[str], lineno: int) -> list[str]:
    """The `#` comment lines right above line `lineno` (1-based), in order."""
    block: list[str] = []
    index = lineno - 2
    while index >= 0 and lines[index].strip().startswith("#"):
        block.insert(0, lines[index].strip().lstrip("#").strip())
        index -= 1
    return block


def _section_title(comment: str) -> str:
    """`Limits (gateway/limits.py): over-size ...` -> `Limits`."""
    cut = min((i for i in (comment.find(c) for c in (" (", ":", ".")) if i > 0), default=None)
    return comment[:cut].strip() if cut else comment.strip()


def _docstring(body: list[ast.stmt], index: int) -> str:
    if index + 1 < len(body):
        node = body[index + 1]
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            if isinstance(node.value.value, str):
                return " ".join(inspect.cleandoc(node.value.value).split())
    return ""


def read_sources(text: str, class_name: str = "Settings") -> dict[str, Source]:
    """Each annotated field of `class_name` in `text`, in source order."""
    tree = ast.parse(text)
    lines = text.splitlines()
    cls = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == class_name)
    found: dict[str, Source] = {}
    for index, node in enumerate(cls.body):
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        comment = " ".join(_comment_above(lines, node.lineno))
        found[node.target.id] = Source(
            annotation=ast.unparse(node.annotation),
            doc=_docstring(cls.body, index),
            section=_section_title(comment) if comment else None,
            intro=comment,
        )
    return found


def env_name(name: str, field: FieldInfo) -> str:
    alias = field.validation_alias if isinstance(field.validation_alias, str) else field.alias
    prefix = str(Settings.model_config.get("env_prefix") or "")
    return alias.upper() if alias else f"{prefix}{name}".upper()


def _duration(value: timedelta) -> str:
    seconds = value.total_seconds()
    for unit, size in _UNITS:
        count = seconds / size
        if count >= 1 and abs(count - round(count)) < 1e-9:
            return f"{round(count)}{unit}"
    return f"{seconds}s"


def render_default(field: FieldInfo) -> str:
    value: Any = field.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    if isinstance(value, Path) and value.is_relative_to(PACKAGE):
        # a place in the installed package: absolute on each machine, so named by the package
        return f"`{value.relative_to(PACKAGE.parent)}` (in the installed package)"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, timedelta):
        return f"`{_duration(value)}`"
    if isinstance(value, list | dict):
        return f"`{json.dumps(value)}`"
    return f"`{value}`"


def render_type(annotation: str, field: FieldInfo) -> str:
    bounds = [
        f"{symbol} {getattr(meta, attr)}"
        for meta in field.metadata
        for attr, symbol in _BOUNDS.items()
        if getattr(meta, attr, None) is not None
    ]
    return f"`{annotation}`" + (f", {', '.join(bounds)}" if bounds else "")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _row(name: str, field: FieldInfo, source: Source | None) -> str:
    annotation = source.annotation if source else str(field.annotation)
    doc = source.doc if source and source.doc else "(no docstring in ag_ui_temporal/settings.py)"
    cells = (
        f"`{env_name(name, field)}`",
        render_type(annotation, field),
        render_default(field),
        doc,
    )
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def generate(text: str | None = None) -> str:
    """The page's text for the settings module's source `text` (default: the file on disk)."""
    if text is None:
        text = Path(inspect.getfile(settings_module)).read_text()
    sources = read_sources(text)
    fields = Settings.model_fields
    # Source order; fields only pydantic knows (inherited, say) come last.
    names = [n for n in sources if n in fields] + [n for n in fields if n not in sources]
    out = [HEADER]
    for index, name in enumerate(names):
        source = sources.get(name)
        if source and source.section:
            # A comment that is only the title ("The worker process.") is not repeated.
            intro = [source.intro, ""] if source.intro.rstrip(".") != source.section else []
            out += ["", f"## {source.section}", "", *intro, *TABLE_HEAD]
        elif index == 0:
            out += ["", f"## {GENERAL}", "", *TABLE_HEAD]
        out.append(_row(name, fields[name], source))
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str]) -> int:
    page = generate()
    if "--check" in argv:
        if OUTPUT.read_text() != page:
            print(f"{OUTPUT} is out of date: run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(page)
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
