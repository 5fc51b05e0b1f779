"""`GET /audit` over real HTTP, on SQLite and PostgreSQL, and the chain view's trail from the
store (`gateway/routes/audit.py`, `chain_audit` in `gateway/routes/approvals.py`).

The store is seeded with hand-made batches (the workflows' side is tested with them); the
gateway serves without Temporal at all (no lifespan, no client): every answer here is the
store's alone, as it must be once Temporal deleted the workflows.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from ag_ui_temporal.gateway.auth import Principal
from ag_ui_temporal.gateway.main import create_app
from ag_ui_temporal.gateway.routes.approvals import chain_audit, entry_view, history
from ag_ui_temporal.gateway.routes.audit import reader_of
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.store import open_engine
from ag_ui_temporal.store.audit import AuditLog, AuditQuery, Reader, ndjson_line
from ag_ui_temporal.store.migrate import upgrade
from ag_ui_temporal.workflows.contract.audit import AuditBatch, AuditRecord
from ag_ui_temporal.workflows.contract.chains import AuditEntryView, ChainView
from tests.audit_trails import AUDIT_KEYS
from tests.conftest import TLS, new_database, serve_app

NDJSON = {"Accept": "application/x-ndjson"}
EVERYONE = Reader(principal="", everything=True)
EXPORTED_KEYS = [
    "scope", "seq", "key", "kind", "at", "threadId", "chainId", "interruptId", "runId",
    "principal", "data", "prev", "keyId", "hash", "recordedAt",
]  # fmt: skip


def _record(key: str, kind: str, at: str, **fields: Any) -> AuditRecord:
    return AuditRecord(key=key, kind=kind, at=at, **fields)


DECISION: dict[str, Any] = {
    "step": "manager",
    "decision": "approve",
    "payload": {"approved": True, "comment": "ok"},
    "metadata": {"client": "web"},
    "via": "link",
}
HOSTILE = "Reimburse the Berlin\u2028offsite\u2029second line\x85third line"
"""A title holding the line breaks JSON leaves unescaped."""
SEED = [
    AuditBatch(
        scope="thread:t-1",
        readers=["alice"],
        records=[
            _record("t1-asked", "asked", "2025-01-01T10:00:00Z", thread_id="t-1",
                    interrupt_id="int-1", run_id="r-1", data={"message": "Send it?"}),
            _record("t1-answered", "answered", "2025-01-02T10:00:00Z", thread_id="t-1",
                    interrupt_id="int-1", run_id="r-2", principal="alice",
                    data={"status": "resolved", "payload": {"approved": True}}),
        ],
    ),
    AuditBatch(
        scope="chain:chain-1",
        readers=["alice", "bob", "carol"],
        records=[
            _record("c1-submitted", "submitted", "2025-01-03T08:00:00Z", chain_id="chain-1",
                    principal="alice", data={"payload": {"amount": 2400}}),
            _record("c1-offered", "offered", "2025-01-03T08:00:01Z", chain_id="chain-1",
                    principal="bob", interrupt_id="int-2", data={"step": "manager"}),
            _record("c1-decision", "decision", "2025-01-03T10:00:00Z", chain_id="chain-1",
                    principal="bob", interrupt_id="int-2", run_id="r-9", data=DECISION),
            _record("c1-completed", "completed", "2025-01-03T10:00:01Z", chain_id="chain-1",
                    data={"decision": "approved"}),
        ],
    ),
    AuditBatch(
        scope="thread:inbox:bob",
        readers=["bob"],
        records=[
            _record("inbox-offered", "offered", "2025-01-03T09:00:00Z", thread_id="inbox:bob",
                    chain_id="chain-1", interrupt_id="int-2", principal="bob"),
            # 10:00 UTC, written with an offset: `since` compares times, not text
            _record("inbox-answered", "answered", "2025-01-03T12:00:00+02:00",
                    thread_id="inbox:bob", chain_id="chain-1", interrupt_id="int-2",
                    run_id="r-9", principal="bob", data={"status": "resolved"}),
            _record("inbox-other", "offered", "2025-01-04T09:00:00Z", thread_id="inbox:bob",
                    interrupt_id="int-3", principal="bob", data={"message": "a producer's"}),
        ],
    ),
    AuditBatch(
        scope="thread:t-finance",
        readers=["group:finance"],
        records=[_record("fin-asked", "asked", "2025-01-05T09:00:00Z", thread_id="t-finance")],
    ),
    AuditBatch(
        scope="thread:t-hostile",
        readers=["zoe"],
        records=[_record("hostile-asked", "asked", "2025-01-01T09:00:00Z", thread_id="t-hostile",
                         data={"message": HOSTILE})],
    ),
]  # fmt: skip
T1 = {"t1-asked", "t1-answered"}
CHAIN = {"c1-submitted", "c1-offered", "c1-decision", "c1-completed"}
SEATS = {"inbox-offered", "inbox-answered"}
INBOX = {*SEATS, "inbox-other"}
FINANCE = {"fin-asked"}
HOSTILE_KEYS = {"hostile-asked"}
EVERYTHING = T1 | CHAIN | INBOX | FINANCE | HOSTILE_KEYS


@dataclass
class Served:
    url: str
    log: AuditLog


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Served]:
    """A gateway on a seeded store, with no Temporal behind it (no lifespan: no client)."""
    url = new_database(request, request.param, tmp_path_factory.mktemp("audit"))
    await upgrade(url)
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("audit-data"),
        database_url=SecretStr(url),
        auth_mode="dev",
        auditors=["compliance", "group:audit"],
        approvals_admins=["approvals-admin"],
    )
    app = create_app(settings)
    log = AuditLog(app.state.store, AUDIT_KEYS)  # the worker's: the gateway's only reads
    for batch in SEED:
        await log.append(batch)
    try:
        async with serve_app(app, lifespan="off") as base:
            yield Served(base, log)
    finally:
        await app.state.store.dispose()


@pytest.fixture
async def http(served: Served) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=served.url, timeout=30, verify=TLS) as client:
        yield client


def caller(principal: str, *groups: str) -> dict[str, str]:
    return {"X-Principal": principal, "X-Principal-Groups": ",".join(groups)}


async def page(http: httpx.AsyncClient, who: dict[str, str], **params: str | int) -> dict[str, Any]:
    answer = await http.get("/audit", params=params, headers=who)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "application/json"
    body: dict[str, Any] = answer.json()
    return body


async def keys(http: httpx.AsyncClient, who: dict[str, str], **params: str | int) -> set[str]:
    body = await page(http, who, limit=1000, **params)
    assert body["next"] is None
    return {record["key"] for record in body["records"]}


@pytest.mark.parametrize(
    ("who", "expected"),
    [
        pytest.param(caller("alice"), T1 | CHAIN | SEATS, id="owner-and-requester"),
        pytest.param(caller("bob"), INBOX | CHAIN, id="inbox-owner-and-approver"),
        pytest.param(caller("carol"), CHAIN | SEATS, id="chain-participant"),
        pytest.param(caller("dave", "finance"), FINANCE, id="group-member"),
        pytest.param(caller("compliance"), EVERYTHING, id="auditor"),
        pytest.param(caller("erin", "audit"), EVERYTHING, id="auditor-by-group"),
        pytest.param(caller("approvals-admin"), CHAIN | SEATS, id="approvals-admin"),
        pytest.param(caller("mallory", "finance-admins"), set(), id="stranger"),
    ],
)
async def test_each_caller_reads_what_the_store_lets_them(
    http: httpx.AsyncClient, who: dict[str, str], expected: set[str]
):
    assert await keys(http, who) == expected


async def test_an_owner_reads_their_thread_in_order(http: httpx.AsyncClient):
    body = await page(http, caller("alice"), threadId="t-1")
    assert [r["key"] for r in body["records"]] == ["t1-asked", "t1-answered"]
    assert body["next"] is None
    first, second = body["records"]
    assert list(first) == EXPORTED_KEYS  # the export's form, and no row id
    assert (first["scope"], first["seq"], second["seq"]) == ("thread:t-1", 1, 2)
    assert second["prev"] == first["hash"] and len(first["hash"]) == 64
    assert second["principal"] == "alice" and second["data"]["payload"] == {"approved": True}


async def test_a_chain_participant_reads_the_chain_and_its_seats(http: httpx.AsyncClient):
    for who in (caller("carol"), caller("bob"), caller("alice"), caller("approvals-admin")):
        assert await keys(http, who, chainId="chain-1") == CHAIN | SEATS
    # a seat's records are in bob's inbox: carol reads them through the chain, not the thread
    assert await keys(http, caller("carol"), threadId="inbox:bob") == SEATS
    assert await keys(http, caller("bob"), threadId="inbox:bob") == INBOX


async def test_an_approvals_admin_reads_no_private_thread(http: httpx.AsyncClient):
    admin = caller("approvals-admin")
    assert await keys(http, admin, threadId="t-1") == set()
    assert await keys(http, admin, threadId="t-finance") == set()
    assert await keys(http, admin, threadId="inbox:bob") == SEATS  # not bob's other offers
    assert await keys(http, admin, principal="alice") == {"c1-submitted"}  # not t1-answered


FILTERS: list[dict[str, str | int]] = [
    {},
    {"threadId": "t-1"},
    {"threadId": "inbox:bob"},
    {"threadId": "no-such-thread"},
    {"chainId": "chain-1"},
    {"principal": "bob"},
    {"since": "2020-01-01T00:00:00Z"},
    {"after": 0},
    {"limit": 1},
]


@pytest.mark.parametrize("params", FILTERS, ids=[json.dumps(f) for f in FILTERS])
async def test_a_stranger_reads_nothing_whatever_the_filter(
    http: httpx.AsyncClient, params: dict[str, str | int]
):
    stranger = caller("mallory", "outsiders")
    assert await page(http, stranger, **params) == {"records": [], "next": None}
    streamed = await http.get("/audit", params=params, headers={**stranger, **NDJSON})
    assert (streamed.status_code, streamed.content) == (200, b"")


async def test_filters_by_who_acted_and_since(http: httpx.AsyncClient):
    auditor = caller("compliance")
    assert await keys(http, auditor, principal="bob") == {
        "c1-offered", "c1-decision", *INBOX,
    }  # fmt: skip
    later = {"c1-decision", "c1-completed", "inbox-answered", "inbox-other", *FINANCE}
    assert await keys(http, auditor, since="2025-01-03T10:00:00Z") == later
    assert await keys(http, auditor, since="2025-01-03T12:00:00+02:00") == later
    assert await keys(http, auditor, since="2025-01-03T10:00:00.001Z") == later - {
        "c1-decision", "inbox-answered",
    }  # fmt: skip
    assert await keys(http, auditor, since="2025-01-04T00:00:00Z", chainId="chain-1") == set()
    assert await keys(http, caller("carol"), since="2025-01-03T09:30:00Z") == {
        "c1-decision", "c1-completed", "inbox-answered",
    }  # fmt: skip


@pytest.mark.parametrize("limit", [1, 3, 5, 11])
async def test_paging_walks_every_record_once(http: httpx.AsyncClient, limit: int):
    auditor = caller("compliance")
    seen: list[str] = []
    after: str | None = None
    pages = 0
    while True:
        params: dict[str, str | int] = {"limit": limit} | ({"after": after} if after else {})
        body = await page(http, auditor, **params)
        pages += 1
        records = body["records"]
        assert len(records) <= limit
        seen += [r["key"] for r in records]
        if body["next"] is None:
            assert len(records) < limit
            break
        assert len(records) == limit
        after = body["next"]
    assert sorted(seen) == sorted(EVERYTHING)  # each once
    assert pages == len(EVERYTHING) // limit + 1
    whole = await page(http, auditor, limit=1000)
    assert [r["key"] for r in whole["records"]] == seen  # the same order, page by page


BAD = [
    {"since": "yesterday"},
    {"since": "2025-01-03T10:00:00"},  # no offset: whose 10:00?
    {"since": "2025-01-03"},
    {"since": "0001-01-01T00:00:00+14:00"},  # before year 1 once in UTC
    {"since": "1736899200"},  # a Unix time is not ISO 8601
    {"since": "x" * 65},
    {"limit": 0},
    {"limit": 1001},
    {"limit": "ten"},
    {"after": -1},
    {"after": "abc"},
    {"after": 2**63},  # beyond BIGINT: the database would refuse it
    {"after": "1.5"},
    {"threadId": ""},
    {"threadId": "t\x00-1"},  # PostgreSQL holds no NUL in text
    {"chainId": "c" * 1001},
    {"principal": "\x00"},
]


@pytest.mark.parametrize("params", BAD, ids=[repr(b)[:40] for b in BAD])
async def test_bad_input_is_a_422_in_json(http: httpx.AsyncClient, params: dict[str, Any]):
    for accept in ({}, NDJSON):
        answer = await http.get("/audit", params=params, headers={**caller("compliance"), **accept})
        assert answer.status_code == 422, answer.text
        assert answer.headers["content-type"] == "application/json"
        (problem,) = answer.json()["detail"]
        assert problem["loc"][0] == "query" and problem["msg"]


async def test_ndjson_streams_the_lines_an_export_writes(served: Served, http: httpx.AsyncClient):
    export = b"".join([ndjson_line(r) async for r in served.log.stream(AuditQuery(), EVERYONE)])
    async with http.stream(
        "GET", "/audit?limit=1", headers={**caller("compliance"), **NDJSON}
    ) as s:
        assert s.status_code == 200
        assert s.headers["content-type"] == "application/x-ndjson"
        streamed = b"".join([chunk async for chunk in s.aiter_bytes()])
    assert streamed == export  # every match: `limit` is for JSON pages
    lines = [json.loads(line) for line in streamed.splitlines()]
    assert {line["key"] for line in lines} == EVERYTHING
    assert all(len(line["hash"]) == 64 and len(line["prev"]) == 64 for line in lines)
    # a reader's stream is their JSON page, line for line
    carol = caller("carol")
    body = await page(http, carol, chainId="chain-1")
    ndjson = await http.get("/audit?chainId=chain-1", headers={**carol, **NDJSON})
    assert [json.loads(line) for line in ndjson.content.splitlines()] == body["records"]
    # from a cursor on: the rest
    after = body["records"][1]
    cursor = (await page(http, carol, chainId="chain-1", limit=2))["next"]
    rest = await http.get(f"/audit?chainId=chain-1&after={cursor}", headers={**carol, **NDJSON})
    assert [json.loads(line) for line in rest.content.splitlines()] == body["records"][2:]
    assert after["key"] not in rest.text


async def test_an_ndjson_record_is_one_line_whatever_its_text(http: httpx.AsyncClient):
    """Read by a client that splits lines as Python does (at U+0085, U+2028, U+2029 too), a
    record holding them is still one line, and the same value."""
    answer = await http.get("/audit?threadId=t-hostile", headers={**caller("zoe"), **NDJSON})
    assert not {"\u0085", "\u2028", "\u2029"} & set(answer.text)
    [line] = answer.text.splitlines()
    assert json.loads(line)["data"] == {"message": HOSTILE}


async def test_json_unless_ndjson_is_asked_for(http: httpx.AsyncClient):
    auditor = caller("compliance")
    for accept in ("application/json", "*/*", "text/html", "application/x-ndjson;q=0"):
        answer = await http.get("/audit", headers={**auditor, "Accept": accept})
        assert answer.headers["content-type"] == "application/json", accept
    mixed = "application/json;q=0.5, application/x-ndjson"
    answer = await http.get("/audit", headers={**auditor, "Accept": mixed})
    assert answer.headers["content-type"] == "application/x-ndjson"


async def test_the_trail_answers_without_temporal(http: httpx.AsyncClient):
    """The gateway under test has no Temporal client: what needs one says so (503), and the
    audit trail answers all the same."""
    chain = await http.get("/approvals/chain-1", headers=caller("alice"))
    assert chain.status_code == 503
    assert await keys(http, caller("alice"), chainId="chain-1") == CHAIN | SEATS


def test_auditors_and_approvals_admins_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    monkeypatch.setenv("AUDITORS", '["compliance", "group:audit"]')
    monkeypatch.setenv("APPROVALS_ADMINS", '["group:finance-admins"]')
    settings = Settings(data_dir=tmp_path, auth_mode="dev")
    assert reader_of(Principal("erin", ("audit",)), settings) == Reader(
        principal="erin", groups=("audit",), everything=True
    )
    assert reader_of(Principal("frank", ("finance-admins",)), settings) == Reader(
        principal="frank", groups=("finance-admins",), chains=True
    )
    assert reader_of(Principal("group:audit"), settings) == Reader(principal="group:audit")
    # with AUTH_MODE=none its one anonymous user reads it all: there is nobody to keep out
    assert reader_of(Principal("anonymous"), Settings(data_dir=tmp_path, auth_mode="none")) == (
        Reader(principal="anonymous", everything=True)
    )


async def test_a_long_stream_is_every_record_once(migrated: str, log: AuditLog, tmp_path: Path):
    """Past a page of the store's reads (500) and many writes of the answer (64 KiB)."""
    text = "x" * 300
    for batch in range(24):
        records = [
            _record(f"long-{batch}-{i}", "asked", "2025-06-01T00:00:00Z", thread_id="t-long",
                    data={"text": text})
            for i in range(50)
        ]  # fmt: skip
        await log.append(AuditBatch(scope="thread:t-long", readers=["olivia"], records=records))
    export = b"".join([ndjson_line(r) async for r in log.stream(AuditQuery(), EVERYONE)])
    assert export.count(b"\n") == 1200 and len(export) > 8 * 64 * 1024
    settings = Settings(data_dir=tmp_path, database_url=SecretStr(migrated), auth_mode="dev")
    app = create_app(settings)
    try:
        async with (
            serve_app(app, lifespan="off") as base,
            httpx.AsyncClient(base_url=base, timeout=30) as http,
        ):
            olivia = caller("olivia")
            streamed = await http.get("/audit", headers={**olivia, **NDJSON})
            assert streamed.content == export
            first = await page(http, olivia, threadId="t-long", limit=1000)
            rest = await page(http, olivia, threadId="t-long", limit=1000, after=first["next"])
            assert (len(first["records"]), len(rest["records"]), rest["next"]) == (1000, 200, None)
    finally:
        await app.state.store.dispose()


# -- the chain view: its trail from the store, else from the chain -----------------------


@pytest.fixture(params=["sqlite", "postgresql"])
async def migrated(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    url = new_database(request, request.param, tmp_path)
    await upgrade(url)
    return url


@pytest.fixture
async def log(migrated: str) -> AsyncIterator[AuditLog]:
    engine = open_engine(migrated)
    yield AuditLog(engine, AUDIT_KEYS)
    await engine.dispose()


def chain_of(chain_id: str, audit: list[AuditEntryView] | None = None) -> ChainView:
    return ChainView(
        chain_id=chain_id, title="Berlin offsite", requester="alice", audit=audit or []
    )


async def test_the_chain_view_reads_its_trail_from_the_store(log: AuditLog):
    for batch in SEED:
        await log.append(batch)
    stale = [AuditEntryView(at="2025-01-03T08:00:00Z", kind="submitted", principal="alice")]
    chain = chain_of("chain-1", stale)
    entries = await chain_audit(log, chain)
    assert entries == [
        AuditEntryView(at="2025-01-03T08:00:00Z", kind="submitted", principal="alice",
                       payload={"amount": 2400}),
        AuditEntryView(at="2025-01-03T08:00:01Z", kind="offered", principal="bob",
                       interrupt_id="int-2", step="manager"),
        AuditEntryView(at="2025-01-03T10:00:00Z", kind="decision", principal="bob",
                       interrupt_id="int-2", run_id="r-9", **DECISION),
        AuditEntryView(at="2025-01-03T10:00:01Z", kind="completed", decision="approved"),
    ]  # fmt: skip
    # lines the chain has not stored yet (its background flush lags) follow the store's
    unstored = AuditEntryView(at="2025-01-03T10:00:02Z", kind="completed", note="not stored")
    ahead = chain_of("chain-1", [*stale, *stale, *stale, *stale, unstored])
    assert await chain_audit(log, ahead) == [*entries, unstored]
    lines = history(chain.model_copy(update={"audit": entries}), {"bob": "Bob Baker"})
    assert [line.text for line in lines] == [
        "alice submitted the request.",
        "Offered to Bob Baker.",
        "Bob Baker approved (by link), note: 'ok'.",
        "The request was approved.",
    ]


async def test_a_chain_the_store_holds_nothing_of_keeps_its_own_trail(log: AuditLog):
    # its seat's record in an inbox names the chain, but the chain's own scope is empty
    seat = _record("c2-seat", "offered", "2025-02-01T09:00:00Z", thread_id="inbox:bob",
                   chain_id="chain-2", principal="bob")  # fmt: skip
    await log.append(AuditBatch(scope="thread:inbox:bob", readers=["bob"], records=[seat]))
    own = [
        AuditEntryView(at="2025-02-01T08:00:00Z", kind="submitted", principal="alice"),
        AuditEntryView(at="2025-02-01T09:00:00Z", kind="offered", principal="bob"),
    ]
    assert await chain_audit(log, chain_of("chain-2", own)) == own
    assert await chain_audit(log, chain_of(f"never-{uuid.uuid4().hex}")) == []


async def test_a_record_the_view_cannot_show_is_left_out_of_it(
    log: AuditLog, caplog: pytest.LogCaptureFixture
):
    records = [
        _record("c3-submitted", "submitted", "2025-03-01T08:00:00Z", chain_id="chain-3",
                principal="alice"),
        _record("c3-new", "teleported", "2025-03-01T08:00:01Z", chain_id="chain-3"),
        _record("c3-bad", "decision", "2025-03-01T08:00:02Z", chain_id="chain-3",
                data={"metadata": "not an object"}),
    ]  # fmt: skip
    await log.append(AuditBatch(scope="chain:chain-3", readers=["alice"], records=records))
    entries = await chain_audit(log, chain_of("chain-3"))
    assert [e.kind for e in entries] == ["submitted"]
    assert "chain:chain-3 #2 (teleported)" in caplog.text
    assert "chain:chain-3 #3 (decision)" in caplog.text
    stored = [r async for r in log.stream(AuditQuery(), EVERYONE)]
    assert [entry_view(r) is None for r in stored] == [False, True, True]
