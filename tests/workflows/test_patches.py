"""The versioning policy, where it can be checked (docs/operations.md, "Versioning workflow
code"): every patch id the code asks is listed in `workflows/patches.py` with the release that
added it, none is listed but unused, and none outlives the policy relative to
`project.version` (asked in its release and the next, deprecated by the one after, then gone).
A thread of the baseline records no patch marker of ours."""

from __future__ import annotations

import ast
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from packaging.version import InvalidVersion, Version
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

import ag_ui_temporal
from ag_ui_temporal.workflows import patches
from ag_ui_temporal.workflows.contract import thread_workflow_id
from tests.agui import finished, interrupts, resolve, run
from tests.modules import parsed

ROOT = Path(__file__).parents[2]
PACKAGE = Path(ag_ui_temporal.__file__).parent
ASKING = {"patched": "asked", "in_force": "asked", "deprecate_patch": "deprecated"}
"""The calls that name a patch id, and how they use it."""
MAX_AGE = {"asked": 1, "deprecated": 2}
"""Releases after its own that a patch may still be asked (`patched`), or deprecated."""


@dataclass(frozen=True)
class Use:
    where: str
    call: str
    patch_id: str | None
    """None: not a constant (a patch id is always one)."""


def uses(root: Path) -> list[Use]:
    """Every call in the package that names a patch id, but `patches.py`'s own."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path == Path(patches.__file__):
            continue
        for node in ast.walk(parsed(path)):  # retried where CPython 3.11's parse races
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name not in ASKING:
                continue
            where = f"{path.relative_to(root.parent)}:{node.lineno}"
            call = ast.unparse(func)
            found.append(Use(where, call, _constant(node.args[0])))
    return found


def _constant(arg: ast.expr) -> str | None:
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    name = arg.attr if isinstance(arg, ast.Attribute) else getattr(arg, "id", None)
    value = getattr(patches, name, None) if name else None
    return value if isinstance(value, str) else None


def releases(changelog: str, version: str) -> list[Version]:
    """The releases the changelog names (`## [x.y.z]`) and the one `project.version` prepares."""
    named = [line[4:].split("]")[0] for line in changelog.splitlines() if line.startswith("## [")]
    found = {Version(v) for v in named if v.lower() != "unreleased"}
    return sorted(found | {Version(Version(version).base_version)})


def kind(use: Use) -> str:
    return ASKING[use.call.rsplit(".", 1)[-1]]


def problems(
    found: list[Use],
    asked: dict[str, str],
    deprecated: dict[str, str],
    known: list[Version],
    version: str,
) -> list[str]:
    """What breaks the policy, one line each (none: the code keeps it)."""
    listed = {"asked": asked, "deprecated": deprecated}
    out = []
    for use in found:
        if use.call == "workflow.patched":
            out.append(f"{use.where}: ask through patches.patched, which checks the list")
        elif use.patch_id is None:
            out.append(f"{use.where}: {use.call} takes a patch id constant")
        elif use.patch_id not in listed[kind(use)]:
            where = "PATCHES" if kind(use) == "asked" else "DEPRECATED"
            out.append(f"{use.where}: {use.patch_id!r} is not listed in patches.{where}")
    current = known.index(Version(Version(version).base_version))
    for listing, ids in listed.items():
        named = {u.patch_id for u in found if kind(u) == listing}
        for patch_id, release in ids.items():
            if patch_id not in named:
                out.append(f"{patch_id!r} is listed ({listing}) but no code uses it so")
            if patch_id in patches.BEFORE_BASELINE:
                out.append(f"{patch_id!r} was squashed into 0.1.0: a patch id is never reused")
            out += _age_problems(patch_id, release, listing, known, current)
    return out


def _age_problems(
    patch_id: str, release: str, listing: str, known: list[Version], current: int
) -> list[str]:
    """A release the changelog does not name, in the future, or too far in the past."""
    try:
        added = Version(release)
    except InvalidVersion:
        return [f"{patch_id!r}: {release!r} is no release"]
    if added <= Version("0.1.0") or added not in known:
        return [f"{patch_id!r}: {release} is not a release after 0.1.0 (CHANGELOG.md)"]
    age = current - known.index(added)
    if age < 0:
        return [f"{patch_id!r}: {release} is after project.version {known[current]}"]
    if age > MAX_AGE[listing]:
        then = "deprecated" if listing == "asked" else "removed"
        return [f"{patch_id!r} ({release}, {listing}) should have been {then} by now"]
    return []


def test_the_code_keeps_the_policy():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    version = pyproject["project"]["version"]
    known = releases((ROOT / "CHANGELOG.md").read_text(), version)
    found = uses(PACKAGE)
    assert problems(found, patches.PATCHES, patches.DEPRECATED, known, version) == []


KNOWN = [Version(v) for v in ("0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.5.0")]


def use(call: str, patch_id: str | None) -> Use:
    return Use("x.py:1", call, patch_id)


@pytest.mark.parametrize(
    ("found", "asked", "deprecated", "version", "expected"),
    [
        ([use("patched", "a")], {"a": "0.2.0"}, {}, "0.2.0", []),
        ([use("patched", "a")], {"a": "0.2.0"}, {}, "0.3.0", []),
        ([use("patched", "a")], {"a": "0.2.0"}, {}, "0.4.0", ["should have been deprecated"]),
        ([use("workflow.deprecate_patch", "a")], {}, {"a": "0.2.0"}, "0.4.0", []),
        ([use("workflow.deprecate_patch", "a")], {}, {"a": "0.2.0"}, "0.5.0", ["removed"]),
        ([use("patched", "a")], {}, {}, "0.2.0", ["not listed in patches.PATCHES"]),
        ([use("workflow.deprecate_patch", "a")], {"a": "0.2.0"}, {}, "0.2.0",
         ["not listed in patches.DEPRECATED", "listed (asked) but no code uses it"]),
        ([], {"a": "0.2.0"}, {}, "0.2.0", ["listed (asked) but no code uses it"]),
        ([use("in_force", None)], {}, {}, "0.2.0", ["takes a patch id constant"]),
        ([use("workflow.patched", "a")], {"a": "0.2.0"}, {}, "0.2.0", ["patches.patched"]),
        ([use("patched", "a")], {"a": "0.3.0"}, {}, "0.2.0", ["after project.version"]),
        ([use("patched", "a")], {"a": "0.1.0"}, {}, "0.2.0", ["not a release after 0.1.0"]),
        ([use("patched", "a")], {"a": "0.2.5"}, {}, "0.3.0", ["not a release after 0.1.0"]),
        ([use("patched", "audit-after-runs")], {"audit-after-runs": "0.2.0"}, {}, "0.2.0",
         ["never reused"]),
    ],
)  # fmt: skip
def test_what_breaks_the_policy(
    found: list[Use], asked: dict[str, str], deprecated: dict[str, str], version: str,
    expected: list[str],
):  # fmt: skip
    said = problems(found, asked, deprecated, KNOWN, version)
    assert len(said) == len(expected), said
    assert all(part in line for part, line in zip(expected, said, strict=True)), said


def test_the_releases_are_the_changelogs_and_the_one_in_preparation():
    changelog = "# Changelog\n\n## [Unreleased]\n\n## [0.2.0] - 2027-01-04\n\n## [0.1.0] - x\n"
    assert releases(changelog, "0.3.0.dev1") == [Version(v) for v in ("0.1.0", "0.2.0", "0.3.0")]


def test_an_unlisted_patch_id_is_refused_where_it_is_asked():
    with pytest.raises(ValueError, match="not listed"):
        patches.patched("a-patch-nobody-listed")


async def test_a_thread_records_each_patch_it_takes_once(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    """Each patch marker is also a `TemporalChangeVersion` visibility write: a thread pays for
    each listed patch it takes once per run, and for no other (pydantic-ai's own, once per
    run, besides)."""
    asked = await run(http, thread_id, text="Send an email to ada@example.com saying hi")
    [interrupt] = interrupts(asked)
    declined = await run(http, thread_id, resume=[resolve(interrupt, {"approved": False})])
    assert finished(declined)["outcome"] == {"type": "success"}
    history = await client.get_workflow_handle(thread_workflow_id(thread_id)).fetch_history()
    markers = [
        json.loads(e.marker_recorded_event_attributes.details["patch-data"].payloads[0].data)["id"]
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
        and e.marker_recorded_event_attributes.marker_name == "core_patch"  # not an activity's
    ]
    ours = [m for m in markers if m != "pydantic_ai:stable_default_run_id"]
    assert sorted(ours) == sorted(set(ours)) and set(ours) <= set(patches.PATCHES), markers
    assert patches.AUDIT_IN_TASK in ours  # what the decline changed was sent in its own task
