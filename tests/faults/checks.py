"""What must hold once the faults are over: no lost, doubled or stuck work."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar, cast

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from ag_ui_temporal.demo.expenses import expense_chain_id
from ag_ui_temporal.gateway.auth import ANONYMOUS
from ag_ui_temporal.notify.channels import message_id, webhook_id
from ag_ui_temporal.notify.links import DECISIONS
from ag_ui_temporal.notify.render import WEBHOOK_TYPES
from ag_ui_temporal.store import AuditLog, AuditQuery, Reader, StoredRecord, open_engine
from ag_ui_temporal.temporal_client import DATA_CONVERTER
from ag_ui_temporal.workflows.contract import (
    PENDING_STATUSES,
    THREAD_QUERY,
    InterruptStatus,
    ThreadView,
    thread_workflow_id,
)
from ag_ui_temporal.workflows.contract.audit import bounded, chain_scope, thread_scope
from ag_ui_temporal.workflows.contract.chains import APPROVAL_CHAIN_WORKFLOW, inbox_thread
from ag_ui_temporal.workflows.contract.notices import NoticeKind, notice_key
from tests.audit_trails import AUDIT_KEYS
from tests.effects import EffectLog
from tests.faults.approvers import APPROVERS, BY_LINK, LinkUse
from tests.faults.flows import CHAIN_KINDS, EMAIL_KINDS, ORDER_KINDS, PLAIN_ANSWER_CHARS, Flow
from tests.faults.notices import Hook, LinkKey, Mail, NoticeServers, claim_of
from tests.faults.scripts import plain_answer
from tests.plain_producer import digest

STARTED = EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
QUERY_ATTEMPTS = 50
AUDIT_WAIT = 120.0
"""Seconds the workflows get to write the last records: they send them in the background,
after the runs the clients saw end (and after a kill, once the store takes them again)."""
AUDIT_POLL = 0.5
SEAT_ENDS = ("answered", "expired", "withdrawn")


def check_outbox(outbox: EffectLog, flows: list[Flow]) -> tuple[int, list[str]]:
    """Every effect exactly once per key; one email per email flow that approved (to the
    address it approved, under its tool call id), none for a rejection; no quarterly report
    (nobody filled the form in). An expense is submitted once: its chain's workflow id is
    the tool call's (`check_chains`)."""
    effects = outbox.effects()
    by_key = Counter(e["key"] for e in effects)
    problems = [f"{key}: {n} effects" for key, n in by_key.items() if n != 1]
    emails = Counter(e["args"]["to"] for e in effects if e["tool"] == "sendEmail")
    for flow in flows:
        if flow.kind in EMAIL_KINDS:
            problems += _one_email(flow, emails, by_key)
    expected = {"sendEmail": sum(f.sent_to is not None for f in flows)}
    found = Counter(e["tool"] for e in effects)
    if found != Counter({k: n for k, n in expected.items() if n}):
        problems.append(f"effects by tool {dict(found)}, expected {expected}")
    return len(effects), problems


def _one_email(flow: Flow, emails: Counter[str], by_key: Counter[str | None]) -> list[str]:
    if flow.sent_to is None:
        return [f"{flow.thread_id}: rejected, yet emailed"] if emails[flow.address] else []
    if emails[flow.sent_to] != 1:
        return [f"{flow.thread_id}: {emails[flow.sent_to]} emails to {flow.sent_to}"]
    if by_key[flow.tool_call_id] != 1:
        return [f"{flow.thread_id}: no effect for its tool call {flow.tool_call_id}"]
    return []


async def check_chains(client: Client, flows: list[Flow]) -> list[str]:
    """One `ApprovalChain` per expense flow (its tool call's id), and no other."""
    expected = Counter(
        expense_chain_id(str(f.tool_call_id)) for f in flows if f.kind in CHAIN_KINDS
    )
    found: Counter[str] = Counter()
    for _ in range(QUERY_ATTEMPTS):  # visibility lags a little behind the starts
        query = f"WorkflowType = '{APPROVAL_CHAIN_WORKFLOW}'"
        found = Counter([w.id async for w in client.list_workflows(query)])
        if found == expected:
            return []
        await asyncio.sleep(0.2)
    return [f"approval chains {dict(found)}, expected {dict(expected)}"]


def check_outcomes(flows: list[Flow]) -> list[str]:
    """Each owner workflow ended with exactly the answers the flow gave: every chain with one
    final decision matching its approvers' answers, every order with the speed chosen, every
    plain producer with the whole large answer."""
    problems = []
    for flow in flows:
        if flow.kind in CHAIN_KINDS:
            problems += _chain_outcome(flow)
            continue
        expected = _expected_outcome(flow)
        if expected is not None and flow.outcome != expected:
            problems.append(f"{flow.thread_id}: ended {flow.outcome}, expected {expected}")
    return problems


FINANCE = ("carol", "dave")
"""Finance's approvers who answer (erin never does: the quorum of two is theirs)."""


def _chain_outcome(flow: Flow) -> list[str]:
    """The chain ended as its steps were decided, with every decision its approvers gave:
    bob's; then carol's and dave's approvals, or one or both of their rejections (the first
    rejects the step: the other seat is withdrawn, or its answer, taken a moment before,
    recorded late)."""
    steps = flow.decisions
    status = "approved" if set(steps.values()) == {"approve"} else "rejected"
    given = list(flow.outcome.get("decisions") or [])
    decisions = set(given)
    manager = {("manager", "bob", steps["manager"])}
    finance = {("finance", p, steps["finance"]) for p in FINANCE} if "finance" in steps else set()
    if steps.get("finance") == "reject":
        fits = manager < decisions <= manager | finance  # one rejection, or both
    else:
        fits = decisions == manager | finance
    if flow.outcome.get("status") != status or not fits or len(given) != len(decisions):
        return [f"{flow.thread_id}: ended {flow.outcome}, expected {status} by {steps}"]
    return []


def _expected_outcome(flow: Flow) -> dict[str, Any] | None:
    if flow.kind == "order":  # answered in the chat by the flow's principal
        return {"order_id": flow.thread_id, "status": "shipped", "speed": flow.speed,
                "decided": "thread", "decided_by": flow.principal, "via": "chat"}  # fmt: skip
    if flow.kind == "plain-order":  # the whole answer, as its owner gave it
        answer = plain_answer(flow)
        return {"status": "resolved", "speed": flow.speed, "notes_chars": PLAIN_ANSWER_CHARS,
                "digest": digest(answer), "principal": flow.principal, "via": "chat"}  # fmt: skip
    return None


def check_logs(logs: dict[str, Path]) -> list[str]:
    """No stack trace in a worker's or the gateway's log: a fault is answered, not crashed on."""
    problems = []
    for name, path in logs.items():
        text = path.read_text(errors="replace") if path.exists() else ""
        if "Traceback" in text:
            start = text.index("Traceback")
            problems.append(f"{name} logged a stack trace: {text[start : start + 1500]}")
    return problems


async def connect(address: str) -> Client:
    return await Client.connect(address, data_converter=DATA_CONVERTER)


async def check_threads(client: Client, flows: list[Flow]) -> list[str]:
    """Every thread has exactly the runs its client started, all finished, no interrupt left
    open; the expired form is expired and said so; the approvers' inboxes are all answered."""
    limit = asyncio.Semaphore(16)

    async def check(thread_id: str, flow: Flow | None) -> list[str]:
        async with limit:
            state = await _thread(client, thread_id)
        problems = [f"{thread_id}: open interrupt {i.id}" for i in state.interrupts
                    if i.status in PENDING_STATUSES]  # fmt: skip
        runs = [(r.run_id, r.finished) for r in state.runs]
        if flow is not None and runs != [(run_id, True) for run_id in flow.runs]:
            problems.append(f"{thread_id}: runs {runs}")
        if flow is not None and flow.kind == "expiry":
            problems += _expired(state, thread_id)
        if flow is not None and flow.kind in CHAIN_KINDS:
            problems += _told_once(state, flow)
        return problems

    inboxes = [check(inbox_thread(p), None) for p in APPROVERS]
    found = await asyncio.gather(*(check(f.thread_id, f) for f in flows), *inboxes)
    return [problem for problems in found for problem in problems]


def _told_once(state: ThreadView, flow: Flow) -> list[str]:
    """The chain's decision reached the requester's thread exactly once, as decided."""
    told = [str(m.get("content")) for m in state.messages if "Your request expense" in
            str(m.get("content"))]  # fmt: skip
    if len(told) != 1 or f"was {flow.outcome.get('status')}" not in told[0]:
        return [f"{flow.thread_id}: told {told} of its chain"]
    return []


def _expired(state: ThreadView, thread_id: str) -> list[str]:
    statuses = [i.status for i in state.interrupts]
    why = "nobody answered before it expired"
    told = any(why in str(m.get("content")) for m in state.messages)
    # and the call has its result: the reason, as the model reads it on the next run
    results = [m.get("content") for m in state.messages if m.get("role") == "tool"]
    if statuses != [InterruptStatus.EXPIRED] or not told or results != [why]:
        return [f"{thread_id}: form {statuses}, told of the expiry: {told}, results {results}"]
    return []


async def _thread(client: Client, thread_id: str) -> ThreadView:
    """The `thread` query, retried while a restarted worker takes over the thread."""
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    delay = 0.05
    for attempt in range(QUERY_ATTEMPTS):
        try:
            return await handle.query(THREAD_QUERY, result_type=ThreadView)
        except Exception:
            if attempt == QUERY_ATTEMPTS - 1:
                raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)
    raise AssertionError("unreachable")


async def activity_retries(client: Client, flows: list[Flow]) -> int:
    """Tool activities that ran more than once: a worker died running them, and they were
    retried after their start-to-close timeout (the outbox keeps the effect single)."""
    limit = asyncio.Semaphore(16)

    async def count(flow: Flow) -> int:
        handle = client.get_workflow_handle(thread_workflow_id(flow.thread_id))
        async with limit:
            history = await handle.fetch_history()
        return sum(
            e.activity_task_started_event_attributes.attempt > 1
            for e in history.events
            if e.event_type == STARTED
        )

    return sum(await asyncio.gather(*(count(f) for f in flows)))


# -- the audit trail -------------------------------------------------------------------------

Trails = dict[str, list[StoredRecord]]
"""A scope's records, in seq order."""


async def check_audit(store_url: str, flows: list[Flow]) -> tuple[int, list[str], Trails]:
    """Every flow's records in the store's audit trail, each exactly once (`_flow_trail`), no
    scope holding one interrupt's stage (or a chain's line) twice, and every trail intact
    (`AuditLog.verify`). The whole trail is read again until that holds, for at most
    `AUDIT_WAIT` s; what is still missing or doubled then is reported. Returns how many
    records `verify` checked, and the trails read."""
    log = AuditLog(open_engine(store_url), AUDIT_KEYS)
    everything = Reader(principal="", everything=True)
    deadline = time.monotonic() + AUDIT_WAIT
    try:
        while True:
            trails: Trails = defaultdict(list)
            async for record in log.stream(AuditQuery(), everything):
                trails[record.scope].append(record)
            for trail in trails.values():
                trail.sort(key=lambda r: r.seq)
            problems = _doubled(trails) + [p for f in flows for p in _flow_trail(f, trails)]
            if not problems or time.monotonic() > deadline:
                break
            await asyncio.sleep(AUDIT_POLL)
        checked, broken, _, _ = await log.verify()
    finally:
        await log.engine.dispose()
    return checked, problems + ([f"audit verify: {broken}"] if broken is not None else []), trails


def _doubled(trails: Trails) -> list[str]:
    """Nothing twice: no key (the store's UNIQUE makes that structural), and in a scope no
    stage of one interrupt; a chain's own lines without a seat (submitted, a step's start
    and end, completed) are told apart by their step and decision."""
    problems = []
    keys = Counter(r.key for trail in trails.values() for r in trail)
    problems += [f"audit key {key} stored {n} times" for key, n in keys.items() if n > 1]
    for scope, trail in trails.items():
        seen = Counter(
            (r.interrupt_id, r.kind) if r.interrupt_id is not None
            else (None, r.kind, r.data.get("step"), r.data.get("decision"))
            for r in trail
        )  # fmt: skip
        problems += [f"{scope}: {what} recorded {n} times" for what, n in seen.items() if n > 1]
    return problems


def _flow_trail(flow: Flow, trails: Trails) -> list[str]:
    """The records of the flow's one interrupt in its thread, in the order they happened,
    with what they must say; for an expense, also its chain's own trail and the seats."""
    if flow.kind == "expiry":
        return _life(flow, trails, ["asked", "delivered", "expired"], None)
    if flow.kind in ORDER_KINDS:
        answer = plain_answer(flow) if flow.kind == "plain-order" else {"speed": flow.speed}
        return _life(flow, trails, ["offered", "delivered", "answered"], answer)
    problems = []
    ran = flow.kind != "reject"  # a rejected call never ran: no result
    expected = ["asked", "delivered", "answered", *(["result"] if ran else [])]
    problems += _life(flow, trails, expected, flow.approval())
    if flow.kind in CHAIN_KINDS:
        problems += _chain_trail(flow, trails)
    return problems


def _life(
    flow: Flow, trails: Trails, expected: list[str], answer: dict[str, Any] | None
) -> list[str]:
    scope = thread_scope(flow.thread_id)
    trail = trails.get(scope, [])
    kinds = [r.kind for r in trail]
    interrupts = {r.interrupt_id for r in trail}
    if kinds != expected or len(interrupts) != 1:
        return [f"{scope} ({flow.kind}): records {kinds} of interrupts {interrupts}, "
                f"expected {expected} of one"]  # fmt: skip
    by_kind = {r.kind: r for r in trail}
    problems = []
    if flow.tool_call_id is not None and by_kind[expected[0]].data.get("toolCallId") != (
        flow.tool_call_id
    ):
        problems.append(f"{scope}: asked {by_kind[expected[0]].data}, not {flow.tool_call_id}")
    if (answered := by_kind.get("answered")) is not None:
        said = (answered.data.get("status"), answered.data.get("payload"))
        if said != ("resolved", bounded(answer)):
            problems.append(f"{scope}: answered {said}, expected resolved {bounded(answer)}")
        who = flow.principal or ANONYMOUS  # the gateway's dev auth, without `X-Principal`
        if answered.principal != who:
            problems.append(f"{scope}: answered by {answered.principal}, not {who}")
    if (result := by_kind.get("result")) is not None and result.data.get("status") != "ok":
        problems.append(f"{scope}: result {result.data}")
    return problems


def _chain_trail(flow: Flow, trails: Trails) -> list[str]:
    """The chain's own trail from `submitted` to `completed` as the chain ended, one
    `decision` per decision it counted; each seat it offered offered in its assignee's inbox
    and closed there, a decided seat answered there with the decision."""
    chain_id = expense_chain_id(str(flow.tool_call_id))
    scope = chain_scope(chain_id)
    own = trails.get(scope, [])
    kinds = [r.kind for r in own]
    if not own or kinds[0] != "submitted" or kinds[-1] != "completed":
        return [f"{scope}: records {kinds}, expected submitted ... completed"]
    problems = []
    if (ended := own[-1].data.get("decision")) != flow.outcome.get("status"):
        problems.append(f"{scope}: completed {ended}, the chain ended {flow.outcome}")
    decided = {r.interrupt_id: r for r in own if r.kind == "decision"}
    decisions = sorted((r.data.get("step"), r.principal, r.data.get("decision"))
                       for r in decided.values())  # fmt: skip
    if decisions != flow.outcome.get("decisions"):
        problems.append(f"{scope}: decisions {decisions}, the chain counted {flow.outcome}")
    for offer in (r for r in own if r.kind == "offered"):
        seat = thread_scope(inbox_thread(str(offer.principal)))
        life = [r for r in trails.get(seat, []) if r.interrupt_id == offer.interrupt_id]
        seen = [r.kind for r in life]
        decision = decided.get(offer.interrupt_id)
        if decision is not None:
            payload = {"decision": decision.data.get("decision")}
            if seen != ["offered", "delivered", "answered"] or life[-1].data.get("payload") != (
                payload
            ):
                problems.append(f"{seat}: seat of {chain_id} {seen}, decided {payload}")
        elif not seen or seen[0] != "offered" or seen[-1] not in SEAT_ENDS:
            problems.append(f"{seat}: seat of {chain_id} {seen}, expected offered ... closed")
    return problems


# -- notices and decision links --------------------------------------------------------------

NOTICE_WAIT = 150.0
"""Seconds the notices get to arrive after the flows ended: an outcome is told after its
chain ended, and a delivery a killed worker was running is tried again only after its
attempt's timeout (`workflows.notices.workflow.ATTEMPT_TIMEOUT`, two minutes)."""
INBOXES = thread_scope(inbox_thread(""))
"""The scopes of the approvers' inboxes, where chains' seats live, start so."""
DECISION_PATH = re.compile(r"/decisions/([\w.\-]+)")


@dataclass(frozen=True)
class Told:
    """A notice the product must send: to whom, what kind, about which interrupt."""

    principal: str
    kind: str
    interrupt_id: str | None
    """None for a chain's outcome."""
    seat: bool = False
    """A chain's seat: its notice carries an approve and a reject link."""


@dataclass
class NoticeCount:
    """What `check_notices` counted: the distinct notices each channel delivered, and the
    deliveries again under an id already delivered (with the same content)."""

    delivered: dict[str, int] = field(default_factory=dict)
    repeats: int = 0


def expected_notices(flows: list[Flow], trails: Trails) -> dict[str, Told]:
    """The notices the flows' records call for, by key: each interrupt offered to named
    principals tells each of them it waits (a chain's seats, a plain producer's question to
    its owner), and each chain's requester hears its outcome. Nothing else is sent: no step
    lasts until its reminder, no seat is escalated or delegated."""
    told: dict[str, Told] = {}
    for scope, trail in trails.items():
        seat = scope.startswith(INBOXES)
        for record in trail:
            if record.kind != "offered" or (interrupt_id := record.interrupt_id) is None:
                continue
            for principal in record.data.get("allowedResolvers") or []:
                key = notice_key(interrupt_id, principal, "waiting")
                told[key] = Told(principal, "waiting", interrupt_id, seat)
    for flow in flows:
        if flow.kind in CHAIN_KINDS and (requester := flow.principal) is not None:
            key = notice_key(expense_chain_id(str(flow.tool_call_id)), requester, "outcome")
            told[key] = Told(requester, "outcome", None)
    return told


async def check_notices(
    servers: NoticeServers, people: dict[str, Any], flows: list[Flow], trails: Trails
) -> tuple[NoticeCount, list[str]]:
    """Every notice the flows call for (`expected_notices`) delivered on both channels (every
    person in the directory has an address), under its key's id, and nothing else; every
    webhook delivery verified; a delivery again under one id (a retry whose first answer was
    lost) saying what the first said, links included (a retry signs new tokens: they must
    decide the same). The notices are awaited for at most `NOTICE_WAIT` s."""
    expected = expected_notices(flows, trails)
    mail_ids, hook_ids = {message_id(k) for k in expected}, {webhook_id(k) for k in expected}
    deadline = time.monotonic() + NOTICE_WAIT
    while True:
        mails = _by_id(servers.mailbox.mails, lambda m: m.id)
        hooks = _by_id(servers.receiver.hooks, lambda h: h.id)
        arrived = mail_ids <= mails.keys() and hook_ids <= hooks.keys()
        if arrived or time.monotonic() > deadline:
            break
        await asyncio.sleep(AUDIT_POLL)
    secret = servers.secrets.links
    forged = servers.receiver.forged
    problems = [f"webhook: {forged} deliveries failed verification"] if forged else []
    problems += _unexpected("email", mails, mail_ids)
    problems += _unexpected("webhook", hooks, hook_ids)
    for key, told in expected.items():
        address = str((people.get(told.principal) or {}).get("email"))
        problems += _mail_says(key, told, address, mails.get(message_id(key), []), secret)
        problems += _hook_says(key, told, hooks.get(webhook_id(key), []), secret)
    repeats = sum(len(m) - 1 for m in mails.values()) + sum(len(h) - 1 for h in hooks.values())
    count = NoticeCount({"email": len(mails), "webhook": len(hooks)}, repeats)
    return count, problems


T = TypeVar("T")


def _by_id(deliveries: list[T], id_of: Callable[[T], str]) -> dict[str, list[T]]:
    grouped: dict[str, list[T]] = defaultdict(list)
    for delivery in list(deliveries):  # a copy: the SMTP server's thread appends to it
        grouped[id_of(delivery)].append(delivery)
    return grouped


def _unexpected(channel: str, got: dict[str, list[Any]], expected: set[str]) -> list[str]:
    return [f"{channel}: {len(got[i])} deliveries of {i}, a notice nobody was to get"
            for i in sorted(set(got) - expected)]  # fmt: skip


def _mail_says(key: str, told: Told, address: str, mails: list[Mail], secret: str) -> list[str]:
    """The notice's email (once, or again saying the same) to the principal's address, with
    the links `_links_say` asks for."""
    if not mails:
        return [f"email: no notice {key} to {told.principal}"]
    first = mails[0]
    problems = _repeats_say("email", key, [(_mail_text(m), m.at) for m in mails], secret)
    if address not in str(first.message["To"]):
        problems.append(f"email: notice {key} went to {first.message['To']}, not {address}")
    return problems + _links_say(f"email {key}", told, _links_in(secret, first.text, first.at))


def _hook_says(key: str, told: Told, hooks: list[Hook], secret: str) -> list[str]:
    """The notice's webhook (once, or again saying the same) of its type, for its principal
    and interrupt, with the links `_links_say` asks for."""
    if not hooks:
        return [f"webhook: no notice {key} to {told.principal}"]
    first = hooks[0]
    problems = _repeats_say("webhook", key, [(_hook_text(h), h.at) for h in hooks], secret)
    data = first.body.get("data") or {}
    said = (first.body.get("type"), data.get("key"), data.get("principal"),
            (data.get("interrupt") or {}).get("id"))  # fmt: skip
    expected = (WEBHOOK_TYPES[cast(NoticeKind, told.kind)], key, told.principal, told.interrupt_id)
    if said != expected:
        problems.append(f"webhook: notice {key} said {said}, expected {expected}")
    shown = " ".join(str(u) for u in (data.get("links") or {}).values())
    return problems + _links_say(f"webhook {key}", told, _links_in(secret, shown, first.at))


def _repeats_say(
    channel: str, key: str, texts: list[tuple[str, datetime]], secret: str
) -> list[str]:
    """Deliveries under one id say the same: their texts, each decision link read as what it
    decides (a retry renders the notice again, with tokens of its own)."""
    if len({_meaning(secret, text, at) for text, at in texts}) > 1:
        return [f"{channel}: {len(texts)} deliveries of {key} differ"]
    return []


def _links_say(where: str, told: Told, found: set[LinkKey]) -> list[str]:
    """A seat's notice links approve and reject, each deciding that for its principal, on
    its interrupt; any other notice links to no decision."""
    seat = {(told.principal, str(told.interrupt_id), d) for d in DECISIONS}
    expected = seat if told.seat else set()
    return [] if found == expected else [f"{where}: decision links {sorted(found)}"]


def _links_in(secret: str, text: str, at: datetime) -> set[LinkKey]:
    """(principal, interrupt, decision) of every decision link in the text."""
    return {
        (c.principal, c.interrupt_id, c.decision)
        for m in DECISION_PATH.finditer(text)
        if (c := claim_of(secret, m.group(0), at)) is not None
    }


def _meaning(secret: str, text: str, at: datetime) -> str:
    """The text with each decision link replaced by what it decides."""

    def decides(link: re.Match[str]) -> str:
        claim = claim_of(secret, link.group(0), at)
        return "?" if claim is None else f"{claim.principal}|{claim.interrupt_id}|{claim.decision}"

    return DECISION_PATH.sub(decides, text)


def _mail_text(mail: Mail) -> str:
    headers = [f"{h}: {mail.message[h]}" for h in ("From", "To", "Subject", "Auto-Submitted")]
    return "\n".join([*headers, mail.text, mail.html])


def _hook_text(hook: Hook) -> str:
    """The body without its `timestamp` (when this attempt was made)."""
    return json.dumps({k: v for k, v in hook.body.items() if k != "timestamp"}, sort_keys=True)


@dataclass
class LinkCount:
    """What the approvers' decision links did (`check_links`)."""

    clicks: int = 0
    thanked: int = 0
    """Links whose page said the decision was taken ("Thank you")."""
    refused: int = 0
    """Links every click of which a page refused (used, answered, gone)."""
    fallbacks: int = 0
    """Items answered through the API after their link was refused."""
    decisions: int = 0
    """Decisions the chains recorded as come by link."""


def check_links(uses: list[LinkUse], trails: Trails) -> tuple[LinkCount, list[str]]:
    """Every link whose page said "Thank you" is a decision the chain recorded from the link's
    principal, as the link decided, `via: link` (in the chain's trail and on the seat in
    the inbox); no decision came by a link every click of which was refused; every decision
    came the way its approver decides (bob through the API, carol and dave by link, through
    the API only after their link was refused)."""
    decided = {r.interrupt_id: r for t in trails.values() for r in t if r.kind == "decision"}
    answered = {r.interrupt_id: r for scope, t in trails.items() for r in t
                if r.kind == "answered" and scope.startswith(INBOXES)}  # fmt: skip
    by_seat = {u.interrupt_id: u for u in uses}
    problems = []
    for use in uses:
        record = decided.get(use.interrupt_id)
        said = None if record is None else (record.principal, record.data.get("decision"),
                                            record.data.get("via"))  # fmt: skip
        if use.applied and said != (use.principal, use.decision, "link"):
            problems.append(f"link {use.principal} {use.decision} {use.interrupt_id} answered "
                            f"{use.answers}, the chain recorded {said}")  # fmt: skip
        if use.refused and said is not None and said[2] == "link":
            problems.append(f"link {use.principal} {use.decision} {use.interrupt_id} refused "
                            f"{use.answers}, yet the chain recorded {said}")  # fmt: skip
    for interrupt_id, record in decided.items():
        via, link = record.data.get("via"), by_seat.get(str(interrupt_id))
        if record.principal in BY_LINK:
            expected = {"link", "api"} if link is not None and link.fallback else {"link"}
            if link is None or via not in expected:
                problems.append(f"{record.scope}: {record.principal} decided {interrupt_id} "
                                f"via {via}, link used: {link}")  # fmt: skip
        elif via != "api":
            problems.append(f"{record.scope}: {record.principal} decided via {via}, not api")
        seat = answered.get(interrupt_id)
        if seat is None or seat.data.get("via") != via:
            shown = None if seat is None else seat.data.get("via")
            problems.append(f"{record.scope}: decision {interrupt_id} via {via}, its seat {shown}")
    count = LinkCount(
        clicks=sum(len(u.answers) for u in uses),
        thanked=sum(u.applied for u in uses),
        refused=sum(u.refused for u in uses),
        fallbacks=sum(u.fallback for u in uses),
        decisions=sum(r.data.get("via") == "link" for r in decided.values()),
    )
    return count, problems
