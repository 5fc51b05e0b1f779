r"""Every `workflow.patched` id the workflows use, named once, and how to ask for one:
`patched` for a path only workflow code takes, `in_force` for a rule that also applies
outside workflows and in validators and queries, `taken_at_start` for a path a run takes
from its start or not at all.

A patch id is recorded in the histories of workflows that took the new path:
renaming one breaks their replay, so these strings never change. Each constant
says what the patch changed; histories recorded before it replay the old path.

A run that begins under code with every patch listed in a generation records that
generation's one marker instead (`generation()`, in the workflow's `__init__`): each marker
is also a `TemporalChangeVersion` search-attribute upsert (a visibility write), which every
new thread and every continue-as-new paid for each patch it touched (six on a thread's
first ask, one more on its first decline).
"""

from __future__ import annotations

from typing import Final

from temporalio import workflow

# -- the thread ---------------------------------------------------------------

INDEX_RUNS_PATCH: Final = "index-run-ids"
"""Runs are indexed in the `AguiRunIds` search attribute (joins find a run's thread)."""
LAZY_INDEX_PATCH: Final = "index-only-runs-in-flight"
"""Only runs that outlive their first workflow task are indexed (most skip the write)."""
DELIVERY_LIMIT_PATCH: Final = "interrupts-per-run-delivery"
"""A run delivers offered interrupts up to `max_interrupts_per_run`; the rest wait."""
PENDING_LIMIT_PATCH: Final = "pending-interrupts-limit"
"""Offers beyond `max_pending_interrupts` are refused (the owner hears `cancelled`)."""
ASK_OWNERS_PATCH: Final = "ask-owners-before-settling"
"""An answer to an external owner's interrupt is accepted only if the owner still takes it."""
INTERRUPT_LIMIT_PATCH: Final = "interrupts-per-run-limit"
"""An agent asking more than `max_interrupts_per_run` interrupts in one run ends it."""
TOOL_FAILURE_RESULT_PATCH: Final = "tool-failure-as-result"
"""A tool that failed for good reports the error as its result and the run goes on (before:
`RUN_ERROR` `RUN_FAILED`, and the batch's later calls were skipped)."""
BOUNDED_STATE_PATCH: Final = "bounded-thread-state"
"""The thread keeps a window of its newest messages and archives older ones to the store
(activity `agui_archive_messages`); a run's `MESSAGES_SNAPSHOT` is a marker filled when read;
oversize new messages are refused (`LIMIT_EXCEEDED`). Histories recorded before carry the
whole transcript in every snapshot and across continue-as-new."""

# -- the agents ---------------------------------------------------------------

TANSTACK_APPROVALS_PATCH: Final = "tanstack-tool-approvals"
"""Interrupts carry TanStack's approval envelope, `$schema`-stamped tool schemas, and the call.

A thread that began before it re-opens its interrupts, when replayed, with the
schemas it announced then, so an answer recorded then validates as it did then
(the new envelope refuses e.g. `{"approved": false, "editedArgs": ...}`).
"""
EXPENSE_PATCH: Final = "expense-approvals"
"""The model understands "Reimburse ..." (threads that heard it before got the help text)."""

# -- schemas ------------------------------------------------------------------

LINEAR_SCHEMA_PATCH: Final = "linear-schema-checks"
r"""Checks run on RE2 with bounded formats. Verdicts can differ on edge cases (a lookahead,
`$` before a final newline, Unicode `\d`, a 5,000-character email), so replays of histories
recorded before keep the checks they were decided with."""

# -- producers (owner workflows) ------------------------------------------------

CONFIRM_SETTLED_PATCH: Final = "confirm-settlements-with-thread"
"""An owner trusts a settlement signal only once the thread's own record confirms it."""

# -- approval chains ----------------------------------------------------------

CHAIN_RULES_PATCH: Final = "approval-chain-rules"
"""No self-approval, distinct people per quorum, known delegates, surviving failed offers."""
CHAIN_MEMO_PATCH: Final = "approval-chain-memo"
"""The chain's summary in its memo (the gateway's list reads it instead of querying)."""
CHAIN_NOTICES_PATCH: Final = "approval-chain-notices"
"""Reminders and the outcome are also sent to people outside the chat (`agui_start_notices`
starts one notification workflow per person); before, they were only posted to inboxes."""

# -- pydantic-ai agents -------------------------------------------------------

LLM_ASSISTANT_PATCH: Final = "pydantic-ai-assistant"
"""The `assistant` is a pydantic-ai agent. Histories from before replay the scripted one,
whose interrupts it still carries out."""
CLIENT_RESULTS_PATCH: Final = "client-tool-results"
"""A run's tool messages that answer the agent's calls of a client's own tools are taken
in (threads before skipped every message that was not the user's)."""

# -- the interrupt contract (issue 19) ------------------------------------------

INTERRUPT_CHECKS_PATCH: Final = "interrupt-taxonomy-checks"
"""An interrupt is built only with a core reason or a namespaced `<framework>:<name>` one
(never `core:`), an object `responseSchema`, a timezone-aware `expiresAt`; a producer's offer
is checked as the thread checks a raw one (`INVALID_REASON`, `INVALID_OFFER`)."""
CONFIRMATION_SCHEMA_PATCH: Final = "confirmation-boolean-schema"
"""A `confirmation` asked without a `responseSchema` gets `{"type": "boolean"}`."""
RESUME_RULES_PATCH: Final = "resume-rules-by-reason"
"""A cancel that carries a payload is `INVALID_RESUME`; a resolve of an interrupt without a
`responseSchema` needs a payload its reason accepts (`INVALID_PAYLOAD`). Validators refuse
such runs outright; the handler re-checks them only in threads that took this patch."""
OFFER_SIGNAL_CHECKS_PATCH: Final = "offer-signal-checks"
"""A raw `offer_interrupt` signal that is no valid interrupt is dropped (its owner hears
`cancelled`, `ag-ui.refused: INVALID_OFFER`) instead of failing the workflow task."""

# -- subagents (issue 19) -------------------------------------------------------

SUBAGENT_PATCH: Final = "subagent-attribution"
"""A raw offer whose `subagentRunId` is empty or too long is refused (`INVALID_OFFER`); an
agent's delegating tool (`agents.delegation`) asks about the inner agent's deferred calls,
each interrupt carrying the inner run's `subagentRunId`."""
DELIVER_ON_ARRIVAL_PATCH: Final = "deliver-offers-on-arrival"
"""An offer that arrives while nothing awaits an answer is delivered at once, by a run the
thread starts itself (a hydrate shows it bound to that run); a run that brings no input
while interrupts await delivers them again, bound to itself, instead of `RESUME_REQUIRED`."""

# -- idempotent replay from the archive (issue 19) --------------------------------

ARCHIVE_INTERRUPTS_PATCH: Final = "archive-settled-interrupts"
"""Answered interrupts leaving the thread's state at continue-as-new are written to the store
(activity `agui_archive_interrupts`), after their runs' events, so a repeated resume of any
earlier run is answered from the archive (the gateway reads it)."""

# -- the spec's companion fields (issue 19) ---------------------------------------

TOOL_CALL_BOUND_PATCH: Final = "tool-call-names-its-call"
"""A `tool_call` interrupt without `toolCallId` is refused where it is built (AG-UI: for
`tool_call`, "`toolCallId` must be set"), from an agent, a producer or a raw offer."""

# -- performance (issue 20) --------------------------------------------------------

REFUSALS_END_TURN_PATCH: Final = "refusals-end-the-turn"
"""An agent registered with `refusals_end_the_turn` whose every asked call was refused ends
the run with the calls' results and its own sentence, without a model request."""

# -- the first generation: every patch above ---------------------------------------

GENERATION_2026_12_01: Final = "patches-2026-12-01"
"""A run that began under the code of 2026-12-01: it takes every patch above."""
_PATCHES_2026_12_01: Final = frozenset(
    {
        INDEX_RUNS_PATCH,
        LAZY_INDEX_PATCH,
        DELIVERY_LIMIT_PATCH,
        PENDING_LIMIT_PATCH,
        ASK_OWNERS_PATCH,
        INTERRUPT_LIMIT_PATCH,
        TOOL_FAILURE_RESULT_PATCH,
        BOUNDED_STATE_PATCH,
        TANSTACK_APPROVALS_PATCH,
        EXPENSE_PATCH,
        LINEAR_SCHEMA_PATCH,
        CONFIRM_SETTLED_PATCH,
        CHAIN_RULES_PATCH,
        CHAIN_MEMO_PATCH,
        LLM_ASSISTANT_PATCH,
        CLIENT_RESULTS_PATCH,
        INTERRUPT_CHECKS_PATCH,
        CONFIRMATION_SCHEMA_PATCH,
        RESUME_RULES_PATCH,
        OFFER_SIGNAL_CHECKS_PATCH,
        SUBAGENT_PATCH,
        DELIVER_ON_ARRIVAL_PATCH,
        ARCHIVE_INTERRUPTS_PATCH,
        TOOL_CALL_BOUND_PATCH,
        REFUSALS_END_TURN_PATCH,
    }
)


def generation() -> frozenset[str]:
    """The patches this run takes without asking: call once, first thing in `__init__`.

    Not replaying, the newest generation's marker is recorded and its patches are taken.
    Replaying, the marker the run recorded then is found (an older generation's, or none
    for a run that began before generations: it asks for each patch, as it did)."""
    for marker, patches in GENERATIONS:
        if workflow.patched(marker):
            return patches
    return frozenset()


def patched(patch_id: str) -> bool:
    """`workflow.patched`, answered without a marker in a run whose generation has the patch
    (`patches_at_start` on the workflow instance; producers' workflows ask as before)."""
    taken: frozenset[str] = getattr(workflow.instance(), "patches_at_start", frozenset())
    return patch_id in taken or workflow.patched(patch_id)


def taken_at_start(patch_id: str) -> bool:
    """Whether this run began under a generation that has `patch_id`: for a path a run must
    take from its start or not at all (a run that began before asks nothing, records no
    marker, and takes the path after its next continue-as-new)."""
    taken: frozenset[str] = getattr(workflow.instance(), "patches_at_start", frozenset())
    return patch_id in taken


def in_force(patch_id: str) -> bool:
    """Whether what `patch_id` changed applies here (ask only where the two paths differ):
    always outside a workflow, and in its validators and queries (read-only: never
    replayed, and they may record no marker); in the workflow, only if the run took the
    patch (`patched`), so histories recorded before replay what they did then."""
    if not workflow.in_workflow() or workflow.unsafe.is_read_only():
        return True
    return patched(patch_id)


# -- since the 2026-12-01 generation (each asked for with its own marker by runs that began
# under that one; the 2026-12-02 generation takes them all) --------------------------

CALLS_PER_RESPONSE_PATCH: Final = "tool-calls-per-response-limit"
"""A model response (or the scripted assistant's reply) with more tool calls than
`max_interrupts_per_run` ends the run `LIMIT_EXCEEDED` before any call is shown or run
(before: every call was announced, the run refused at the first ask past the limit, and
thousands of calls outlasted the workflow task's deadlock timeout). Asked for only when a
response is over the limit, so runs within it record no marker."""
INDEX_FITS_PATCH: Final = "index-only-run-ids-that-fit"
"""`AguiRunIds` leaves out run ids over `MAX_RUN_ID_BYTES` (a caller that skips the gateway's
check): the recent ids always fit the server's 2048 bytes, where more would fail every task
that indexes them. Asked only when an id is left out."""

UNOWNED_CLOSED_PATCH: Final = "unowned-threads-admins-only"
"""A thread without an owner is an admin's only (`RunRequest.admin`): the run handler checks
the effective owner by `may_act` as the validator does (before: the recorded owner, and a
thread without one was anyone's). Asked only where the two verdicts differ, which a new run
never reaches (its validator refused it), so no run records a marker."""

RECORD_AT_DEADLINE_PATCH: Final = "owner-reads-record-at-deadline"
"""A producer whose deadline passes with no settlement heard asks the thread's record
(`agui_confirm_settled`) and takes the answer the thread accepted, instead of `expired` (a
settlement signal that never arrived: the thread showed the question answered). Asked only
at such a deadline."""

INBOX_BATCH_PATCH: Final = "inbox-delivers-every-offer"
"""An inbox thread shows every waiting item at once: an offer that arrives while others await
an answer makes the thread start a run of its own that delivers the awaiting batch again,
bound to itself, with the new offers (up to `max_interrupts_per_run`; the rest wait for the
next such run). Before, such an offer waited for the run that answered the others. Asked only
where the two differ (an inbox thread, offers waiting while others await), so other threads
record no marker."""

# -- the audit trail (issue 29) ------------------------------------------------------

THREAD_AUDIT_PATCH: Final = "thread-audit-trail"
"""The thread records each interrupt's life in the store's audit trail (activity
`agui_audit_append`, started after the run or signal that changed it): asked or offered,
delivered, answered, expired, withdrawn, and an approved tool's result. An interrupt leaves the
thread's state at continue-as-new only once its records are written. Taken from a run's start
only (`taken_at_start`): a thread running when it was deployed writes its trail from its next
continue-as-new, the interrupts it carries included."""
CHAIN_AUDIT_PATCH: Final = "approval-chain-audit-trail"
"""The chain writes its audit trail to the store as it grows (`agui_audit_append`), where
`GET /approvals/{chain}` and `GET /audit` read it, also after the workflow is gone. Taken from
a run's start only (`taken_at_start`): a chain running when it was deployed writes its whole
trail from its next continue-as-new (until then its view shows the chain's own)."""


# -- generations: every patch above, taken by a run from its start -----------------

GENERATION_2026_12_02: Final = "patches-2026-12-02"
"""A run that began under the code of 2026-12-02: the 2026-12-01 generation, every patch asked
for with its own marker since, and the audit trail's."""
_PATCHES_2026_12_02: Final = _PATCHES_2026_12_01 | {
    CALLS_PER_RESPONSE_PATCH,
    INDEX_FITS_PATCH,
    UNOWNED_CLOSED_PATCH,
    RECORD_AT_DEADLINE_PATCH,
    INBOX_BATCH_PATCH,
    CHAIN_NOTICES_PATCH,
    THREAD_AUDIT_PATCH,
    CHAIN_AUDIT_PATCH,
}


# -- protocol edges (issue 30) --------------------------------------------------------------

APPROVALS_WITHOUT_EDITS_PATCH: Final = "approvals-without-edits"
"""An agent registered with `approve_with_edits=False` asks its tool approvals with TanStack's
envelope without `editedArgs` (closed, so a resume carrying edits is `INVALID_PAYLOAD`); before,
every approval took edits whatever the agent promised. Asked only by such an agent's approvals,
so other threads record no marker."""
REJECTION_NOTES_PATCH: Final = "rejection-notes-heard"
"""A tool's `ask_person(reject_payload=...)` is its approval's reject branch (TanStack's
`approvalSchema.reject`), and a rejection's note (the payload's `reason` or `note`, or the
payload itself when a string) is part of the denial the model reads: `you rejected it: <note>`,
one line, bounded. Asked only by such tools' approvals and by rejections carrying a note."""
REFUSAL_OWN_KEY_PATCH: Final = "refusal-in-own-namespace"
"""An offer the thread refuses (full, or no valid interrupt) reaches its owner with
`metadata["ag-ui-temporal:refused"] = {"code", "message"}`, the server's own key; before, the
server wrote `{"ag-ui": {"refused", "message"}}` into AG-UI's reserved namespace, which is the
protocol's, not a server's (owners read both: `contract.offer_refusal`). Asked only when an
offer is refused; the settlement query answers with the new key."""
IDLE_RUN_STATE_PATCH: Final = "idle-run-keeps-state"
"""A run that brings no input (no answer, no new user message, no client tool result) leaves
the thread's `state` as it is, whatever `state` it carries (a client re-attaching with what
it had, while interrupts await); before, any `state` sent replaced it. Asked only by such runs
that carry a `state`."""
CLIENT_TOOL_APPROVALS_PATCH: Final = "client-tool-approvals"
"""A client tool that needs approval (`register(approve_client_tools=...)`, or `needsApproval:
true` on the client's tool entry) is a `tool_call` interrupt first: approved, its call goes to
the client (with the approved arguments), rejected, the model reads the denial and the client
never runs it; before, every call of a client tool went to the client at once. Asked only by
runs offered such a tool, so other threads record no marker."""
EXPIRED_SETTLES_PATCH: Final = "expired-interrupts-stop-blocking"
"""An interrupt that expires is settled as expired (`InterruptView.lapsed`): no resume need
answer it, so new input is taken and a hydrate no longer offers it (a cancel still
acknowledges it, a resolve is still `INTERRUPT_EXPIRED`); and a run that arrives after an
`expiresAt` whose timer has not fired yet expires it first, as the timer would. Before, an
expired interrupt blocked the thread (`RESUME_REQUIRED`) until a client cancelled it. Asked
only when an interrupt expires (by its timer or by such a run)."""

# -- fixes -----------------------------------------------------------------------------------

AUDIT_AFTER_RUNS_PATCH: Final = "audit-after-runs"
"""A thread sends its audit records only while no run (no update or signal handler) is going
on. Before, a send could start in the workflow task where a run's update completed: a replay
issued the two commands in the other order (`TMPRL1100` on the update's completion), and
the thread could take no further task (seen when an answer was refused, then accepted with
the audit idle in between, on a worker that replays every task). Asked once per run, at its
first send."""

DROPPED_RUNS_PATCH: Final = "dropped-runs-refused"
"""The thread remembers the runs the gateway's stuck-thread watch dropped (`agui_drop_runs`,
sent just before it resets the thread to before them) and refuses any copy of them that
arrives later (`RUN_FAILED`, nothing recorded): before, a dropped run's update that Temporal
re-sent to the reset thread (update-with-start retries an update aborted by a closing run)
could still land after its client was told it was dropped. Asked only by that signal, so
threads never reset record no marker."""

# -- run ids sent again (issue 39) -----------------------------------------------------------

CONTINUATION_PATCH: Final = "resume-under-the-asking-run-id"
"""A resume sent under the run id of the run whose interrupts it answers (CopilotKit's
`useInterrupt` pins it) is a continuation: a run of its own, under an id of its own
(`ThreadState.sent_as`), shown to the client under the id it sent; another body under a run
id the thread knows is refused, `RUN_ID_REUSED` (`workflows.thread._continuation`). Before,
the handler answered any body under a known run id with that run's events. Asked only where
the two differ: a run id the thread knows, sent with another body."""


# -- generations since ----------------------------------------------------------------------

GENERATION_2026_12_02B: Final = "patches-2026-12-02b"
"""A run that began under the code of the second deploy of 2026-12-02: the 2026-12-02
generation and the fixes above. The protocol edges' patches stay asked where their paths
differ: whether a thread takes some of them depends on how its agent is registered when it
asks (`approve_with_edits`, `reject_payload`), and a run that took them all from its start
would decide otherwise on replay after a registration changed."""
GENERATIONS: Final = (
    (GENERATION_2026_12_02B, _PATCHES_2026_12_02 | {AUDIT_AFTER_RUNS_PATCH}),
    (GENERATION_2026_12_02, _PATCHES_2026_12_02),
    (GENERATION_2026_12_01, _PATCHES_2026_12_01),
)
"""Newest first. A patch added later is asked for with its own marker until a new generation
(prepended here, its set a superset of the last) covers it; a generation is never edited."""


# -- since the 2026-12-02b generation (each asked for with its own marker) -----------------

STOP_WAITING_RUNS_PATCH: Final = "stop-runs-waiting-their-turn"
"""A stop (`cancel_run`) may name a run whose update was accepted and waits behind another run
of the thread (not in its log yet): the run begins stopped, and ends `RUN_CANCELLED` where
its agent would begin. Before, such a stop was refused as for an unknown run and the run went
on. Asked only by a stop that names such a run."""
SENDERS_STOP_RUNS_PATCH: Final = "only-senders-stop-runs"
"""Only a run's sender or an admin may stop it (`may_stop`): another member of the group that
owns the thread is refused (`NotSender`). Before, whoever may act on the thread could. Asked
only where the two rules differ, which a new stop never reaches (its validator, never
replayed, refused it): histories from before replay the stops they took."""
