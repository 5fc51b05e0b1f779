"""The audit trail end to end, on SQLite and on PostgreSQL: a tool approval with edits in a
chat thread and two expense chains (one escalated and left to expire, one delegated and
decided by a quorum) leave every proposal, decision and result in the store, each once and
hash-chained; `GET /audit` answers the owner, the chain's participants and an auditor, and a
stranger nothing; it answers the same once Temporal deleted every workflow involved; an
export round-trips; an altered record (the edited `to` address) fails `audit verify`,
which names it; and a store that does not answer holds up no answer, and gets its records
once it does.

On the dev server (the time-skipping server cannot delete workflows): the escalated chain's
steps expire after two seconds of real time.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sqlite3
import sys
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from pydantic import SecretStr
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import EventType
from temporalio.api.workflowservice.v1 import DeleteWorkflowExecutionRequest
from temporalio.client import Client, WorkflowHandle
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from ag_ui_temporal.settings import Settings, sqlite_url
from ag_ui_temporal.store import AuditLog, AuditQuery, Reader, ndjson_line, open_engine
from ag_ui_temporal.store.migrate import upgrade
from ag_ui_temporal.workflows.chains.definitions import ChainDefinition, ChainStep
from ag_ui_temporal.workflows.contract import thread_workflow_id
from ag_ui_temporal.workflows.contract.audit import AUDIT_APPEND_ACTIVITY
from ag_ui_temporal.workflows.contract.chains import ChainView, inbox_thread
from tests.agui import finished, interrupts, new_id, resolve, run
from tests.audit_trails import AUDIT_KEYS, TEST_AUDIT_KEY
from tests.conftest import new_database, serve_stack
from tests.test_approvals import Chains

EMAIL = "Send an email to ada@example.com saying hi"
EDITED = {"to": "grace@example.com", "subject": "Hello", "body": "hi from Grace's assistant"}
AUDITOR = "auditor"


@dataclass
class Stack:
    http: httpx.AsyncClient
    env: WorkflowEnvironment
    settings: Settings
    url: str
    queue: str


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def stack(
    request: pytest.FixtureRequest,
    temporal_env: WorkflowEnvironment,
    tmp_path_factory: pytest.TempPathFactory,
    executor: ThreadPoolExecutor,
) -> AsyncIterator[Stack]:
    """A worker and a gateway on a store of the engine's own."""
    url = new_database(request, request.param, tmp_path_factory.mktemp("audit"))
    await upgrade(url)
    queue = f"audit-{request.param}-{uuid.uuid4().hex[:6]}"
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("data"),
        task_queue=queue,
        database_url=SecretStr(url),
        audit_key=SecretStr(TEST_AUDIT_KEY),  # what `audit verify` below is given too
        auditors=[AUDITOR],
        approvals_admins=[AUDITOR],  # the chains are not indexed: only an admin finds them
        index_runs=False,
    )
    async with serve_stack(temporal_env.client, settings, executor) as http:
        yield Stack(http, temporal_env, settings, url, queue)


async def audit(stack: Stack, who: str, **query: str) -> list[dict[str, Any]]:
    """Every record `who` may read of `query`, a page at a time."""
    records: list[dict[str, Any]] = []
    after: str | None = None
    while True:
        params = {**query, "limit": "20", **({"after": after} if after else {})}
        page = await stack.http.get("/audit", params=params, headers={"X-Principal": who})
        assert page.status_code == 200, page.text
        body = page.json()
        records += body["records"]
        if (after := body["next"]) is None:
            return records


async def audit_until(stack: Stack, who: str, done: Any, **query: str) -> list[dict[str, Any]]:
    """The records once `done(records)` holds (the workflows write them in the background)."""
    async with asyncio.timeout(60):
        while not done(records := await audit(stack, who, **query)):
            await asyncio.sleep(0.05)
    return records


def kinds(records: list[dict[str, Any]], **where: Any) -> list[str]:
    return [r["kind"] for r in records if all(r.get(k) == v for k, v in where.items())]


def assert_chained(records: list[dict[str, Any]], *whole: str) -> None:
    """Each key once; in each scope, records in order, each naming the one just before it;
    the `whole` scopes numbered from 1 without a gap (others may hold records of elsewhere:
    an inbox holds several chains' seats)."""
    assert not [k for k, n in Counter(r["key"] for r in records).items() if n > 1]
    by_scope: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_scope.setdefault(record["scope"], []).append(record)
    for scope, trail in by_scope.items():
        trail.sort(key=lambda r: r["seq"])
        seqs = [r["seq"] for r in trail]
        assert len(set(seqs)) == len(seqs)
        if scope in whole:
            assert seqs == list(range(1, len(trail) + 1))
        for before, after in itertools.pairwise(trail):
            if after["seq"] == before["seq"] + 1:
                assert after["prev"] == before["hash"]


async def delete(client: Client, *workflow_ids: str) -> None:
    """Delete the workflows from Temporal (running ones are terminated first), and wait until
    the server no longer knows them."""
    for workflow_id in workflow_ids:
        execution = WorkflowExecution(workflow_id=workflow_id)
        request = DeleteWorkflowExecutionRequest(
            namespace=client.namespace, workflow_execution=execution
        )
        await client.workflow_service.delete_workflow_execution(request)
    async with asyncio.timeout(60):
        for workflow_id in workflow_ids:
            while True:
                try:
                    await client.get_workflow_handle(workflow_id).describe()
                except RPCError:
                    break
                await asyncio.sleep(0.1)


def expense(bob: str, dana: str, finance: list[str], manager_expires: timedelta) -> ChainDefinition:
    return ChainDefinition(
        name="expense",
        groups={"finance": finance},
        steps=[
            ChainStep(
                name="manager", approvers=[bob], expires_in=manager_expires,
                on_expiry="escalate", escalate_to=dana,
            ),
            ChainStep(
                name="finance", approvers=["finance"], quorum=2, expires_in=timedelta(days=2),
            ),
        ],
    )  # fmt: skip


# -- a tool approval with edits ------------------------------------------------------------


async def test_a_tool_approval_with_edits_leaves_its_whole_life_in_the_trail(stack: Stack):
    olivia, thread_id = f"olivia-{uuid.uuid4().hex[:6]}", new_id("thread")
    [asked] = interrupts(await run(stack.http, thread_id, text=EMAIL, principal=olivia))
    await run(
        stack.http,
        thread_id,
        principal=olivia,
        resume=[resolve(asked, {"approved": True, "editedArgs": EDITED})],
    )
    records = await audit_until(stack, olivia, lambda rs: "result" in kinds(rs), threadId=thread_id)
    assert kinds(records) == ["asked", "delivered", "answered", "result"]
    assert {r["interruptId"] for r in records} == {asked["id"]}
    proposal = records[0]["data"]["proposal"]
    assert proposal["arguments"]["to"] == "ada@example.com" and proposal["tool"]
    assert records[0]["data"]["toolCallId"] == asked["toolCallId"]
    answered = records[2]
    assert answered["principal"] == olivia
    assert answered["data"]["payload"] == {"approved": True, "editedArgs": EDITED}
    assert answered["data"]["via"] == "chat" and answered["data"]["status"] == "resolved"
    result = records[3]["data"]
    assert result["status"] == "ok" and "grace@example.com" in json.dumps(result["content"])
    assert_chained(records, f"thread:{thread_id}")

    # Only the owner and the auditors read it; the trail outlives the thread's workflow.
    assert await audit(stack, "mallory", threadId=thread_id) == []
    assert await audit(stack, AUDITOR, threadId=thread_id) == records
    await delete(stack.env.client, thread_workflow_id(thread_id))
    assert await audit(stack, olivia, threadId=thread_id) == records

    # Someone edits the stored answer: `audit verify` names the record; put back, it passes.
    assert (await verify(stack.url))[0] == 0
    engine = open_engine(stack.url)
    try:
        await tamper(engine, answered["key"], "mallory@example.com")
        code, said = await verify(stack.url)
        assert code == 1, said
        assert f"thread:{thread_id} #3 answered (key {answered['key']})" in said
        await tamper(engine, answered["key"], EDITED["to"])
        assert (await verify(stack.url))[0] == 0
    finally:
        await engine.dispose()


@asynccontextmanager
async def store_held(stack: Stack, scope: str) -> AsyncIterator[None]:
    """The store does not take `scope`'s records until the block ends: SQLite's write lock
    (each append waits for it), PostgreSQL's lock of the scope (`audit._lock`)."""
    if stack.url.startswith("sqlite"):
        path = sa.make_url(stack.url).database
        assert path
        writer = sqlite3.connect(path, isolation_level=None)
        writer.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            writer.execute("ROLLBACK")
            writer.close()
        return
    from ag_ui_temporal.store.audit import _lock  # the very lock an append takes

    engine = open_engine(stack.url)
    try:
        async with engine.begin() as db:
            await _lock(db, scope)
            yield
    finally:
        await engine.dispose()


async def test_an_answer_does_not_wait_for_a_store_that_does_not_answer(stack: Stack):
    """A change's records go with one local attempt in the workflow task that made it (at most
    `_trail.LOCAL_TIMEOUT`: the answer waits for it); what the store did not take in time
    goes with an activity in the background, which waits for the store: each record once."""
    olivia, thread_id = f"olivia-{uuid.uuid4().hex[:6]}", new_id("thread")
    [asked] = interrupts(await run(stack.http, thread_id, text=EMAIL, principal=olivia))
    await audit_until(stack, olivia, lambda rs: "delivered" in kinds(rs), threadId=thread_id)
    async with store_held(stack, f"thread:{thread_id}"):
        declined = await run(
            stack.http, thread_id, principal=olivia, resume=[resolve(asked, {"approved": False})]
        )
        assert finished(declined)["outcome"] == {"type": "success"}  # while the store waits
    records = await audit_until(
        stack, olivia, lambda rs: "answered" in kinds(rs), threadId=thread_id
    )
    assert kinds(records) == ["asked", "delivered", "answered"]
    assert_chained(records, f"thread:{thread_id}")
    history = await stack.env.client.get_workflow_handle(
        thread_workflow_id(thread_id)
    ).fetch_history()
    sent = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]
    assert sent.count(AUDIT_APPEND_ACTIVITY) == 1  # the decline's, after its local attempt


async def verify(url: str) -> tuple[int, str]:
    """`ag-ui-temporal audit verify` on the store at `url`: its exit code and what it said."""
    command = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "ag_ui_temporal.cli", "audit", "verify",
        env={**os.environ, "DATABASE_URL": url, "AUDIT_KEY": TEST_AUDIT_KEY},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    said, _ = await command.communicate()
    assert command.returncode is not None
    return command.returncode, said.decode()


async def tamper(engine: Any, key: str, to: str) -> None:
    """Rewrite the stored answer's edited `to`, as someone with the database's password could."""
    from ag_ui_temporal.store.tables import audit_records

    async with engine.begin() as db:
        data = (
            await db.execute(sa.select(audit_records.c.data).where(audit_records.c.key == key))
        ).scalar_one()
        data["payload"]["editedArgs"]["to"] = to
        await db.execute(
            sa.update(audit_records).where(audit_records.c.key == key).values(data=data)
        )


# -- approval chains -------------------------------------------------------------------------


async def test_expense_chains_leave_every_decision_in_the_trail_after_temporal_forgets_them(
    stack: Stack, tmp_path: Path
):
    chains = Chains(stack.env, stack.http, stack.queue)
    alice, bob, dana = chains.who("alice"), chains.who("bob"), chains.who("dana")
    carol, dave, erin = finance = [chains.who(n) for n in ("carol", "dave", "erin")]

    # Nobody answers the first: its manager step expires, is escalated to dana, expires again.
    ignored = await chains.start(
        expense(bob, dana, finance, timedelta(seconds=2)), request={"amount": 90},
        title="Expense 90 EUR", requester=alice,
    )  # fmt: skip
    # The second: bob approves, carol delegates to dana, dave and dana make the quorum.
    decided = await chains.start(
        expense(bob, dana, finance, timedelta(days=1)), request={"amount": 2400},
        title="Expense 2400 EUR", requester=alice,
    )  # fmt: skip
    await answer(stack, chains, decided, bob, {"decision": "approve", "comment": "ok"})
    await chains.until(decided, lambda s: s.current == 1)
    await answer(stack, chains, decided, carol, {"decision": "delegate", "delegateTo": dana})
    await answer(stack, chains, decided, dave, {"decision": "approve"})
    await answer(stack, chains, decided, dana, {"decision": "approve", "comment": "fine"})
    assert (await decided.result()).status == "approved"
    assert (await ignored.result()).status == "rejected"

    trails: dict[str, list[dict[str, Any]]] = {}
    for handle in (ignored, decided):
        trails[handle.id] = await audit_until(
            stack, alice, lambda rs: "completed" in kinds(rs), chainId=handle.id
        )

    # The escalated chain: expiry, escalation, the seat offered to dana, expiry again.
    own = kinds(trails[ignored.id], scope=f"chain:{ignored.id}")
    assert own[0] == "submitted" and own[-1] == "completed"
    assert own.count("expired") == 2 and own.count("escalated") == 1
    escalated = next(r for r in trails[ignored.id] if r["kind"] == "escalated")
    assert escalated["principal"] == dana
    seats = [r for r in trails[ignored.id] if r["scope"] == f"thread:{inbox_thread(bob)}"]
    # bob's seat, closed: the chain withdrew it, and the thread's own timer for the same
    # deadline may have expired it first
    assert kinds(seats)[:2] == ["offered", "delivered"]
    assert kinds(seats)[2:] in (["withdrawn"], ["expired", "withdrawn"], ["expired"])

    # The decided chain: each decision with who, how and what they wrote.
    trail = trails[decided.id]
    decisions = [
        (r["kind"], r["principal"], r["data"].get("decision"), r["data"].get("via"))
        for r in trail
        if r["scope"] == f"chain:{decided.id}" and r["kind"] in ("decision", "delegated")
    ]
    assert decisions == [
        ("decision", bob, "approve", "api"),
        ("delegated", carol, "delegate", "api"),
        ("decision", dave, "approve", "api"),
        ("decision", dana, "approve", "api"),
    ]
    danas = [r for r in trail if r["scope"] == f"thread:{inbox_thread(dana)}"]
    assert kinds(danas) == ["offered", "delivered", "answered"]
    assert danas[-1]["data"]["payload"] == {"decision": "approve", "comment": "fine"}
    assert danas[0]["data"]["approval"]["delegatedFrom"] == carol
    for chain_id, records in trails.items():
        assert_chained(records, f"chain:{chain_id}")

    # The chain's view reads its trail from the store, in sentences.
    view = await stack.http.get(f"/approvals/{decided.id}", headers={"X-Principal": AUDITOR})
    assert view.status_code == 200, view.text
    result: ChainView = await decided.result()
    assert [e["kind"] for e in view.json()["audit"]] == [e.kind for e in result.audit]
    said = [line["text"] for line in view.json()["history"]]
    assert any("approved" in text and "'fine'" in text for text in said), said

    # A stranger reads nothing; an auditor everything; after Temporal deleted every workflow
    # involved, the same.
    assert await audit(stack, "mallory", chainId=decided.id) == []
    everything = {h: await audit(stack, AUDITOR, chainId=h) for h in trails}
    assert everything == trails  # alice takes part: she reads what an auditor does
    inboxes = [thread_workflow_id(inbox_thread(p)) for p in (bob, carol, dave, erin, dana)]
    await delete(stack.env.client, ignored.id, decided.id, *inboxes)
    for chain_id, records in trails.items():
        assert await audit(stack, alice, chainId=chain_id) == records
        assert await audit(stack, "mallory", chainId=chain_id) == []

    # The NDJSON answer is the export's, and an export imported elsewhere exports the same.
    ndjson = await stack.http.get(
        "/audit",
        params={"chainId": decided.id},
        headers={"X-Principal": AUDITOR, "Accept": "application/x-ndjson"},
    )
    assert ndjson.status_code == 200
    assert [json.loads(line) for line in ndjson.text.splitlines()] == trails[decided.id]
    assert ndjson.content == await export(stack.url, decided.id)
    everything_exported = await export(stack.url, None)  # whole trails: an import takes them
    copy = sqlite_url(tmp_path / "copy.sqlite3")
    await upgrade(copy)
    copied = AuditLog(open_engine(copy), AUDIT_KEYS)
    try:
        lines = [json.loads(line) for line in everything_exported.splitlines()]
        assert await copied.import_records(lines) == len(lines)
        assert (await copied.verify()).broken is None
    finally:
        await copied.engine.dispose()
    assert await export(copy, None) == everything_exported


async def answer(
    stack: Stack, chains: Chains, handle: WorkflowHandle, who: str, payload: dict[str, Any]
) -> None:
    """`who` decides their seat through the decision API."""
    item = await chains.item(handle, who)
    decided = await stack.http.post(
        f"/interrupts/{item['id']}",
        json={"status": "resolved", "payload": payload},
        headers={"X-Principal": who},
    )
    assert decided.status_code == 200, decided.text


async def export(url: str, chain_id: str | None) -> bytes:
    log = AuditLog(open_engine(url))
    try:
        reader = Reader(principal="", everything=True)
        return b"".join(
            [ndjson_line(r) async for r in log.stream(AuditQuery(chain_id=chain_id), reader)]
        )
    finally:
        await log.engine.dispose()
