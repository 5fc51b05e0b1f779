"""The docs stay true to the code: the settings page is generated from ag_ui_temporal/settings.py,
every relative link in README.md and docs/ lands on a file (and heading) that exists,
and the README stays a short front door."""

from __future__ import annotations

import re
from pathlib import Path

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import ErrorCode
from docs import gen_settings

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
REGENERATE = f"run `.venv/bin/{gen_settings.COMMAND}` to regenerate it"

FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def prose(text: str) -> str:
    """The text outside fenced code blocks (code comments are not headings, nor links)."""
    return FENCE.sub("", text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a page, duplicates numbered as GitHub does (`x`, `x-1`)."""
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(prose(path.read_text())):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(page: Path) -> list[str]:
    """The relative links of `page` whose file or `#anchor` does not exist."""
    problems = []
    text = CODE_SPAN.sub("", prose(page.read_text()))
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        if not dest.exists():
            problems.append(f"{page.name}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            problems.append(f"{page.name}: {target} (no heading #{anchor} in {dest.name})")
    return problems


def test_settings_page_is_generated_from_settings_py():
    page = (ROOT / "docs" / "settings.md").read_text()
    assert page == gen_settings.generate(), f"docs/settings.md is out of date: {REGENERATE}"


def test_every_setting_is_on_the_settings_page_with_a_docstring():
    sources = gen_settings.read_sources((ROOT / "ag_ui_temporal" / "settings.py").read_text())
    undocumented = [name for name in Settings.model_fields if not sources.get(name, None)]
    undocumented += [name for name, source in sources.items() if not source.doc]
    assert not undocumented, (
        f"settings without a docstring under them in ag_ui_temporal/settings.py: {undocumented}; "
        f"add one, then {REGENERATE}"
    )
    page = (ROOT / "docs" / "settings.md").read_text()
    for name in Settings.model_fields:
        assert f"| `{name.upper()}` |" in page, f"{name.upper()} missing: {REGENERATE}"


def test_the_generator_reads_sections_docstrings_and_defaults():
    source = '''
class Settings:
    first: int = 1
    """The first."""
    # Limits (somewhere): why they exist.
    second: str | None = None
    third: bool = False
    """Third, on
    two lines."""
'''
    found = gen_settings.read_sources(source)
    assert list(found) == ["first", "second", "third"]
    assert found["first"].doc == "The first." and found["first"].section is None
    assert found["second"].section == "Limits" and found["second"].doc == ""
    assert found["second"].annotation == "str | None"
    assert found["third"].doc == "Third, on two lines." and found["third"].section is None
    fields = Settings.model_fields
    assert gen_settings.render_default(fields["sse_keepalive"]) == "`15s`"
    assert gen_settings.render_default(fields["api_keys_file"]) == "unset"
    assert gen_settings.render_default(fields["index_runs"]) == "`true`"
    assert gen_settings.env_name("sse_keepalive", fields["sse_keepalive"]) == "SSE_KEEPALIVE"


def test_every_relative_link_in_the_docs_resolves():
    problems = [problem for page in PAGES for problem in broken_links(page)]
    assert not problems, "broken links:\n" + "\n".join(problems)


def test_the_link_check_finds_a_broken_file_and_anchor(tmp_path: Path):
    (tmp_path / "other.md").write_text("# A `code` title: here\n\n## Same\n\n## Same\n\n## `A_B`\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#a-code-title-here) [ok](other.md#same-1) [ok](#local) "
        "[ok](other.md#a_b) [web](https://example.com/x.md) `[code](nowhere.md)`\n\n# Local\n\n"
        "```sh\n# not a heading [nor](a-link.md)\n```\n"
        "[bad](missing.md) [bad](other.md#nope) [bad](#same)\n"
    )
    assert broken_links(page) == [
        "page.md: missing.md (no such file)",
        "page.md: other.md#nope (no heading #nope in other.md)",
        "page.md: #same (no heading #same in page.md)",
    ]


def test_every_run_error_code_is_in_the_protocol_page():
    page = (ROOT / "docs" / "protocol.md").read_text()
    missing = [code.value for code in ErrorCode if f"`{code.value}`" not in page]
    assert not missing, f"RUN_ERROR codes missing from docs/protocol.md's table: {missing}"


def test_the_readme_is_a_front_door():
    readme = (ROOT / "README.md").read_text()
    assert "make run" in readme and "make test" in readme
    assert len(readme.splitlines()) < 300, "keep README.md short: move detail into docs/"
    assert "docs/README.md" in readme
