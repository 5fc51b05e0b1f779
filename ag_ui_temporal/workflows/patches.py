"""The `workflow.patched` ids of the workflows, each with the release that added it.

0.1.0 is the baseline: its workflow code asks no patch, and the histories recorded under it
(`tests/workflows/histories/`) replay under every later commit. From then on (docs/
operations.md, "Versioning workflow code"):

- a change to what a workflow does takes its new path where `patched(ID)` (or `in_force(ID)`
  for a rule also checked outside workflows) says so; `ID` is listed in `PATCHES` with the
  release that adds it, and a history recorded on the new path joins the replayed ones;
- one generation per release: a release deprecates the patches of the release before it
  (`workflow.deprecate_patch(ID)`, the new path only; listed in `DEPRECATED`) once a visibility
  query shows no open workflow started before that release, and the release after removes them;
- an id is recorded in histories: it never changes, and is never reused.

`tests/workflows/test_patches.py` checks this list against the code and `project.version`.
"""

from __future__ import annotations

from typing import Final

from temporalio import workflow

AUDIT_IN_TASK: Final = "audit-in-the-changing-task"
"""A thread sends its audit records with a local activity in the workflow task that made the
change (`_trail`), not with an activity whose result wakes another task."""

PATCHES: Final[dict[str, str]] = {AUDIT_IN_TASK: "0.2.0"}
"""Patch id -> the release that added it (`"0.2.0"`), for every id `patched`/`in_force` ask."""

DEPRECATED: Final[dict[str, str]] = {}
"""Patch id -> the release that added it, for ids the code passes to
`workflow.deprecate_patch`: gone from the code and from here one release later."""

BEFORE_BASELINE: Final = frozenset(
    {
        "index-run-ids",
        "index-only-runs-in-flight",
        "interrupts-per-run-delivery",
        "pending-interrupts-limit",
        "ask-owners-before-settling",
        "interrupts-per-run-limit",
        "tool-failure-as-result",
        "bounded-thread-state",
        "tanstack-tool-approvals",
        "expense-approvals",
        "linear-schema-checks",
        "confirm-settlements-with-thread",
        "approval-chain-rules",
        "approval-chain-memo",
        "approval-chain-notices",
        "pydantic-ai-assistant",
        "client-tool-results",
        "interrupt-taxonomy-checks",
        "confirmation-boolean-schema",
        "resume-rules-by-reason",
        "offer-signal-checks",
        "subagent-attribution",
        "deliver-offers-on-arrival",
        "archive-settled-interrupts",
        "tool-call-names-its-call",
        "refusals-end-the-turn",
        "tool-calls-per-response-limit",
        "index-only-run-ids-that-fit",
        "unowned-threads-admins-only",
        "owner-reads-record-at-deadline",
        "inbox-delivers-every-offer",
        "thread-audit-trail",
        "approval-chain-audit-trail",
        "approvals-without-edits",
        "rejection-notes-heard",
        "refusal-in-own-namespace",
        "idle-run-keeps-state",
        "client-tool-approvals",
        "expired-interrupts-stop-blocking",
        "audit-after-runs",
        "dropped-runs-refused",
        "resume-under-the-asking-run-id",
        "stop-runs-waiting-their-turn",
        "only-senders-stop-runs",
        "patches-2026-12-01",
        "patches-2026-12-02",
        "patches-2026-12-02b",
    }
)
"""The patch ids and generation markers of the code before 0.1.0, which squashed them: a
workflow whose run recorded one (in its history, and in its `TemporalChangeVersion` search
attribute) cannot be resumed by 0.1.0 or later (`parked`). Never listed in `PATCHES` again."""


def patched(patch_id: str) -> bool:
    """`workflow.patched` for a listed id: whether this run takes the new path. Ask only
    where the two paths differ (each first ask records a marker); asked in `__init__`, it
    says whether the run began under the release that added it."""
    if patch_id not in PATCHES:
        raise ValueError(f"patch {patch_id!r} is not listed in workflows.patches.PATCHES")
    return workflow.patched(patch_id)


def in_force(patch_id: str) -> bool:
    """Whether what `patch_id` changed applies here: always outside a workflow, and in its
    validators and queries (read-only: never replayed, and they may record no marker); in
    the workflow, only if the run took the patch (`patched`)."""
    if not workflow.in_workflow() or workflow.unsafe.is_read_only():
        return True
    return patched(patch_id)
