"""A thread's standing decisions (`workflows.contract.standing`): made by an answer that asks
for one, applied when the agent asks about a call one covers, revoked on request.

A call a standing decision covers is still an interrupt, recorded as the agent asked it and
answered at once as its decider did (`resolved_via` `"standing"`): the audit trail has it as
any other, and the agent goes on from it as from a person's answer, in the same run."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from ag_ui_temporal.workflows._common import iso, new_id
from ag_ui_temporal.workflows.contract import (
    PENDING_STATUSES,
    TOOL_CALL_METADATA_KEY,
    InterruptStatus,
    ResumeItem,
    WireDict,
)
from ag_ui_temporal.workflows.contract.standing import (
    MAX_STANDING,
    STANDING_KEY,
    STANDING_METADATA_KEY,
    StandingDecision,
    canonical,
    offered,
    requested,
)
from ag_ui_temporal.workflows.contract.tools import approval
from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord
from ag_ui_temporal.workflows.thread.state import ThreadState


def answer_at_once(
    state: ThreadState, record: InterruptRecord, now: datetime
) -> StandingDecision | None:
    """Answer `record`, a call the agent just asked about, as the standing decision that
    covers it did (the newest, if several); None: none covers it, it waits for a person."""
    call = _call(record)
    if call is None or offered(record.interrupt.get("responseSchema")) is None:
        return None
    name, args = call
    decision = next((d for d in reversed(state.standing) if d.covers(name, args, now)), None)
    if decision is None:
        return None
    answer = ResumeItem(
        interrupt_id=record.id,
        status="resolved",
        payload=decision.answer,
        has_payload=True,
        metadata={STANDING_METADATA_KEY: {"id": decision.id, "interruptId": decision.interrupt_id}},
    )
    record.answer(answer, record.run_id, decision.by, "standing", iso(now))
    return decision


def answered_at_once(state: ThreadState, run_id: str | None) -> list[InterruptRecord]:
    """The calls of run `run_id` standing decisions answered that the agent has not gone on
    from, once nothing else it asked in the run waits for a person (then the person's answer
    brings them along)."""
    own = [r for r in state.interrupts if r.run_id == run_id and r.owner is None and not r.acted]
    if any(record.status in PENDING_STATUSES for record in own):
        return []
    return [record for record in own if record.resolved_via == "standing"]


def problem(record: InterruptRecord, payload: Any) -> str | None:
    """Why an answer cannot make the standing decision it asks for (None: it can, or asks
    for none). The schema checked its shape: one that does not offer it refused it."""
    if _call(record) is None or requested(payload) is None:
        return None  # another interrupt's `standing` is its own schema's business
    decided = approval(payload)
    if decided is not None and decided.edited_args is not None:
        return "a standing decision takes no edited arguments: it answers the calls as asked"
    return None


def stand(
    state: ThreadState, record: InterruptRecord, answer: ResumeItem, by: str | None, now: datetime
) -> StandingDecision | None:
    """The standing decision `answer`, applied to `record`, asks for (checked by `problem`),
    kept in the thread in place of one of the same scope (and of expired ones)."""
    request = requested(answer.payload)
    longest = offered(record.interrupt.get("responseSchema"))
    call = _call(record)
    decided = approval(answer.payload)
    if request is None or longest is None or call is None or decided is None:
        return None
    if record.status != InterruptStatus.RESOLVED:
        return None  # not applied (an expired one is only acknowledged)
    name, args = call
    any_args = request.args == "any"
    seconds = min(request.expires_in_seconds or longest, longest)
    decision = StandingDecision(
        id=new_id("standing"),
        tool=name,
        args=None if any_args else args,
        any_args=any_args,
        approved=decided.approved,
        answer={key: value for key, value in answer.payload.items() if key != STANDING_KEY},
        by=by,
        interrupt_id=record.id,
        at=iso(now),
        expires_at=iso(now + timedelta(seconds=seconds)),
    )
    kept = [d for d in state.standing if _kept(d, decision, now)]
    state.standing = [*kept, decision][-MAX_STANDING:]
    return decision


def revocable(state: ThreadState, decision_id: str) -> StandingDecision | None:
    """The decision `decision_id`, unless it was revoked already."""
    found = next((d for d in state.standing if d.id == decision_id), None)
    return found if found is not None and found.revoked_at is None else None


def revoke(
    state: ThreadState, decision_id: str, by: str | None, now: datetime
) -> StandingDecision | None:
    """Take the decision `decision_id` back: the calls it covered ask again. It stays in the
    thread until the audit trail has its revocation (`thread._audit`)."""
    found = revocable(state, decision_id)
    if found is not None:
        found.revoked_at, found.revoked_by = iso(now), by
    return found


def _call(record: InterruptRecord) -> tuple[str, WireDict] | None:
    """The tool call an agent's `tool_call` interrupt asks about: its name and arguments."""
    if record.owner is not None or record.interrupt.get("reason") != "tool_call":
        return None
    metadata = record.interrupt.get("metadata")
    call = metadata.get(TOOL_CALL_METADATA_KEY) if isinstance(metadata, dict) else None
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        return None
    args = call.get("arguments")
    return call["name"], args if isinstance(args, dict) else {}


def _kept(decision: StandingDecision, new: StandingDecision, now: datetime) -> bool:
    """Whether `decision` stays beside the `new` one: it stands and covers other calls, or
    its revocation is not in the audit trail yet (`thread._audit` takes it out then)."""
    revoked = decision.revoked_at is not None
    return revoked or (decision.stands(now) and not _same_scope(decision, new))


def _same_scope(a: StandingDecision, b: StandingDecision) -> bool:
    return (
        a.tool == b.tool
        and a.any_args == b.any_args
        and (a.any_args or canonical(a.args) == canonical(b.args))
    )
