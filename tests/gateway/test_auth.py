"""Authentication and authorization, against the real stack: every `AUTH_MODE`, thread
ownership (run, hydrate, join), group resolvers, and the `hash-key` CLI."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import Envelope
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi import FastAPI
from pydantic import BaseModel, SecretStr
from temporalio import workflow
from temporalio.client import Client
from temporalio.service import RPCError
from temporalio.testing import ActivityEnvironment
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from ag_ui_temporal.gateway.auth import ClaimedPeople
from ag_ui_temporal.gateway.deps import GatewayRefused
from ag_ui_temporal.gateway.main import create_app
from ag_ui_temporal.notify.activities import Notifier
from ag_ui_temporal.notify.directory import Directory, People
from ag_ui_temporal.settings import Settings, sqlite_url
from ag_ui_temporal.store import KnownPeople, open_engine
from ag_ui_temporal.store.migrate import upgrade
from ag_ui_temporal.workflows.chains.definitions import ChainDefinition, ChainInput, ChainStep
from ag_ui_temporal.workflows.chains.workflow import ApprovalChain
from ag_ui_temporal.workflows.contract.chains import ChainView, inbox_thread
from ag_ui_temporal.workflows.contract.notices import Notice
from ag_ui_temporal.workflows.producers import ask_in_thread
from tests.agui import (
    error,
    finished,
    interrupts,
    new_id,
    parse_sse,
    resolve,
    run_body,
    thread_state,
)
from tests.conftest import free_port, serve_app, serve_gateway

ROOT = Path(__file__).resolve().parents[2]
SECRET = "s" * 64  # HMAC keys shorter than the hash trip PyJWT's (error-level) warning
EMAIL = "Send an email to ada@example.com saying hi"


# -- helpers ---------------------------------------------------------------------------------


@asynccontextmanager
async def gateway(
    settings: Settings, client: Client, **overrides: Any
) -> AsyncIterator[httpx.AsyncClient]:
    """A gateway in another auth mode, on the session's worker (same task queue)."""
    mode = Settings(data_dir=settings.data_dir, task_queue=settings.task_queue, **overrides)
    async with (
        serve_gateway(mode, client) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        yield http


async def post(
    http: httpx.AsyncClient,
    body: dict[str, Any],
    headers: dict[str, str] | None = None,
    agent: str = "assistant",
) -> httpx.Response:
    return await http.post(f"/agents/{agent}", json=body, headers=headers)


async def events(
    http: httpx.AsyncClient,
    body: dict[str, Any],
    headers: dict[str, str] | None = None,
    agent: str = "assistant",
) -> list[dict[str, Any]]:
    response = await post(http, body, headers, agent)
    assert response.status_code == 200, response.text
    return parse_sse(response.text)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def assert_401(response: httpx.Response, *secrets: str) -> None:
    assert response.status_code == 401, response.text
    assert response.headers["www-authenticate"] == "Bearer"
    assert "detail" in response.json()
    for secret in secrets:
        assert secret not in response.text


async def hydrate(
    http: httpx.AsyncClient, thread_id: str, headers: dict[str, str]
) -> dict[str, Any]:
    response = await http.get("/agents/assistant", params={"threadId": thread_id}, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


async def join(
    http: httpx.AsyncClient, thread_id: str, run_id: str, headers: dict[str, str]
) -> httpx.Response:
    params = {"runId": run_id, "threadId": thread_id, "offset": "-1"}
    return await http.get("/agents/assistant", params=params, headers=headers)


async def assert_owner_only(
    client: Client,
    http: httpx.AsyncClient,
    thread_id: str,
    owner: dict[str, str],
    other: dict[str, str],
) -> None:
    """`owner` created `thread_id` with one run that asks for an approval; `other` can
    neither continue, nor resume, nor re-send the run, nor see it: a resume is answered as
    one of a thread that does not exist."""
    state = await thread_state(client, thread_id)
    [first] = state.runs
    [record] = state.interrupts
    answer = resolve(record.interrupt, {"approved": True})
    for body in (
        run_body(thread_id, "hello"),
        run_body(thread_id, resume=[answer]),
        run_body(thread_id, runId=first.run_id),  # re-sent: the stored answer is the owner's
    ):
        refused = error(await events(http, body, other))
        assert refused["code"] == ("UNKNOWN_INTERRUPT_ID" if body.get("resume") else "FORBIDDEN")
        assert "ada@example.com" not in json.dumps(refused)
        if body.get("resume"):  # word for word what a thread that does not exist answers
            nowhere = new_id("nowhere")
            unknown = error(await events(http, {**body, "threadId": nowhere}, other))
            assert json.dumps(refused) == json.dumps(unknown).replace(nowhere, thread_id)
    assert await thread_state(client, thread_id) == state

    hidden = await hydrate(http, thread_id, other)
    assert hidden["messages"] == [] and hidden.get("interrupts") is None
    assert (await join(http, thread_id, first.run_id, other)).status_code == 404

    assert len((await hydrate(http, thread_id, owner))["messages"]) >= 1
    joined = await join(http, thread_id, first.run_id, owner)
    assert joined.status_code == 200
    assert parse_sse(joined.text)[-1]["type"] == "RUN_FINISHED"
    done = await events(
        http, run_body(thread_id, resume=[resolve(record.interrupt, {"approved": True})]), owner
    )
    assert finished(done)["outcome"]["type"] == "success"
    assert (await thread_state(client, thread_id)).interrupts[0].resolved_by is not None


# -- dev (the session's gateway) --------------------------------------------------------------


async def test_dev_thread_belongs_to_its_creator(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    alice, bob = {"X-Principal": "alice"}, {"X-Principal": "bob"}
    interrupts(await events(http, run_body(thread_id, EMAIL), alice))
    assert (await thread_state(client, thread_id)).owner == "alice"
    await assert_owner_only(client, http, thread_id, alice, bob)
    assert (await thread_state(client, thread_id)).interrupts[0].resolved_by == "alice"
    # no X-Principal: the fixed `anonymous` dev principal, which owns nothing of alice's
    refused = error(await events(http, run_body(thread_id, "hi")))
    assert refused["code"] == "FORBIDDEN"


async def test_dev_without_a_principal_is_anonymous(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    interrupts(await events(http, run_body(thread_id, EMAIL)))
    assert (await thread_state(client, thread_id)).owner == "anonymous"
    refused = error(await events(http, run_body(thread_id, "hi"), {"X-Principal": "bob"}))
    assert refused["code"] == "FORBIDDEN"


# -- api_key, with keys made by the CLI ----------------------------------------------------------


async def hash_key_cli(*args: str, stdin: str | None = None) -> tuple[dict[str, Any], str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "ag_ui_temporal.cli", "hash-key", *args,
        cwd=ROOT,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await process.communicate(stdin.encode() if stdin else None)
    assert process.returncode == 0, err.decode()
    return json.loads(out), err.decode()


async def test_api_keys_made_by_the_cli(
    settings: Settings, client: Client, worker: Worker, tmp_path: Path, thread_id: str
):
    alice_entry, said = await hash_key_cli("--principal", "alice", "--group", "ops")
    alice_key = said.rsplit(" ", 1)[-1].strip()
    assert len(alice_key) >= 40 and alice_key not in json.dumps(alice_entry)
    bob_key = "bob-" + uuid.uuid4().hex
    bob_entry, said = await hash_key_cli("--principal", "bob", "--stdin", stdin=bob_key + "\n")
    assert said == "" and bob_entry["groups"] == []  # a given key is not printed back
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps([alice_entry, bob_entry]))
    assert alice_entry["groups"] == ["ops"]

    async with gateway(settings, client, auth_mode="api_key", api_keys_file=keys) as http:
        body = run_body(thread_id, EMAIL)
        assert_401(await post(http, body))
        assert_401(await post(http, body, {"X-Principal": "alice"}))  # dev headers mean nothing
        assert_401(await post(http, body, bearer("nope-" + alice_key)), alice_key)
        assert_401(await post(http, body, {"X-API-Key": alice_key[:-1]}), alice_key[:-1])
        assert (await http.get("/approvals", params={"assignee": "alice"})).status_code == 401
        with pytest.raises(RPCError):  # nothing was started by the refusals
            await thread_state(client, thread_id)

        interrupts(await events(http, body, bearer(alice_key)))
        assert (await thread_state(client, thread_id)).owner == "alice"
        await assert_owner_only(
            client, http, thread_id, {"X-API-Key": alice_key}, {"X-API-Key": bob_key}
        )
        mine = await http.get("/approvals", params={"assignee": "alice"}, headers=bearer(alice_key))
        assert mine.status_code == 200
        theirs = await http.get("/approvals", params={"assignee": "bob"}, headers=bearer(alice_key))
        assert theirs.status_code == 403
        ops = await http.get(
            "/approvals", params={"assignee": "group:ops"}, headers=bearer(alice_key)
        )
        assert ops.status_code == 200


def test_a_broken_keys_file_stops_the_gateway_before_it_serves(tmp_path: Path):
    keys = tmp_path / "keys.yaml"
    keys.write_text("- {sha256: not-a-hash, principal: x}\n")
    for path in (keys, tmp_path / "missing.yaml"):
        with pytest.raises(GatewayRefused, match=f"API_KEYS_FILE={path}"):
            create_app(Settings(auth_mode="api_key", api_keys_file=path))


# -- jwt -------------------------------------------------------------------------------------


def claims(sub: str = "alice", **extra: Any) -> dict[str, Any]:
    now = int(time.time())
    base = {"sub": sub, "iss": "https://idp.test", "aud": "ag-ui", "iat": now, "exp": now + 600}
    return {**base, **extra}


JWT = {"jwt_issuer": "https://idp.test", "jwt_audience": "ag-ui", "jwt_leeway": "5s"}


async def test_jwt_hs256_checks_signature_issuer_audience_and_expiry(
    settings: Settings, client: Client, worker: Worker, thread_id: str
):
    def token(key: str = SECRET, **extra: Any) -> str:
        return jwt.encode(claims(**extra), key, algorithm="HS256")

    async with gateway(settings, client, auth_mode="jwt", jwt_secret=SECRET, **JWT) as http:
        body = run_body(thread_id, EMAIL)
        expired = token(exp=int(time.time()) - 60)
        for bad in (
            expired,
            token(iss="https://evil.test"),
            token(aud="another-app"),
            token(key="k" * 64),  # another signer
            jwt.encode({k: v for k, v in claims().items() if k != "exp"}, SECRET, "HS256"),
            jwt.encode(claims(), "", algorithm="none"),
            "not-a-jwt",
        ):
            assert_401(await post(http, body, bearer(bad)), bad)
        assert_401(await post(http, body))

        interrupts(await events(http, body, bearer(token())))
        assert (await thread_state(client, thread_id)).owner == "alice"
        await assert_owner_only(client, http, thread_id, bearer(token()), bearer(token(sub="bob")))


@pytest.fixture(scope="module")
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


async def test_jwt_rs256_from_a_cached_jwks_url(
    settings: Settings, client: Client, worker: Worker, thread_id: str, rsa_key: Any
):
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(rsa_key.public_key()))
    idp, fetches = FastAPI(), []

    @idp.get("/jwks.json")
    async def jwks() -> dict[str, Any]:
        fetches.append(datetime.now(UTC))
        return {"keys": [{**jwk, "kid": "k1", "use": "sig", "alg": "RS256"}]}

    def token(key: Any = rsa_key, kid: str = "k1", **extra: Any) -> str:
        return jwt.encode(claims(**extra), key, algorithm="RS256", headers={"kid": kid})

    async with (
        serve_app(idp) as idp_url,
        gateway(
            settings, client, auth_mode="jwt", jwt_jwks_url=f"{idp_url}/jwks.json", **JWT
        ) as http,
    ):
        body = run_body(thread_id, EMAIL)
        other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        for bad in (
            token(aud="another-app"),
            token(exp=int(time.time()) - 60),
            token(key=other),  # the right kid, the wrong key
            jwt.encode(claims(), SECRET, algorithm="HS256"),  # HS256 is not configured
        ):
            assert_401(await post(http, body, bearer(bad)), bad)
        groups = token(groups=["finance"])
        interrupts(await events(http, body, bearer(groups)))
        assert (await thread_state(client, thread_id)).owner == "alice"
        await assert_owner_only(client, http, thread_id, bearer(token()), bearer(token(sub="bob")))
        assert len(fetches) == 1  # every later token was checked against the cached keys


async def test_jwt_rs256_with_a_pem_public_key_and_custom_claims(
    settings: Settings, client: Client, worker: Worker, thread_id: str, rsa_key: Any
):
    pem = rsa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    overrides = {"jwt_principal_claim": "email", "jwt_groups_claim": "roles"}
    async with gateway(
        settings, client, auth_mode="jwt", jwt_public_key=pem.decode(), **JWT, **overrides
    ) as http:
        token = jwt.encode(claims(email="carol@example.com", roles="a b"), rsa_key, "RS256")
        interrupts(await events(http, run_body(thread_id, EMAIL), bearer(token)))
        assert (await thread_state(client, thread_id)).owner == "carol@example.com"
        nameless = jwt.encode(claims(), rsa_key, "RS256")  # no `email` claim
        assert_401(await post(http, run_body(thread_id, "hi"), bearer(nameless)))


async def test_a_jwt_email_claim_is_remembered_for_notifications(
    settings: Settings, client: Client
):
    principal, other = f"pat-{uuid.uuid4().hex[:8]}", f"sam-{uuid.uuid4().hex[:8]}"

    def token(sub: str, **extra: Any) -> dict[str, str]:
        return bearer(jwt.encode(claims(sub, **extra), SECRET, algorithm="HS256"))

    async def person(name: str) -> tuple[str | None, str | None]:
        engine = open_engine(settings.store_url)
        try:
            found = await People(Directory(), engine).person(name)
        finally:
            await engine.dispose()
        return found.email, found.name

    async with gateway(settings, client, auth_mode="jwt", jwt_secret=SECRET, **JWT) as http:
        first = token(principal, email="pat@example.com", email_verified=True, name="Pat Doe")
        assert (await http.get("/me", headers=first)).json()["principal"] == principal
        assert await person(principal) == ("pat@example.com", "Pat Doe")
        moved = token(principal, email="pat@new.example.com", email_verified="true")  # no name
        assert (await http.get("/me", headers=moved)).status_code == 200
        assert await person(principal) == ("pat@new.example.com", "Pat Doe")  # the name stays
        for unverified in ({}, {"email_verified": False}, {"email_verified": "yes"}):
            claimed = token(principal, email="someone@else.example", **unverified)
            assert (await http.get("/me", headers=claimed)).status_code == 200
            assert await person(principal) == ("pat@new.example.com", "Pat Doe")
        header = token(other, email="sam@example.com\r\nBcc: all@example.com", email_verified=True)
        assert (await http.get("/me", headers=header)).status_code == 200
        assert await person(other) == (None, None)  # not an address: not remembered


async def test_only_a_verified_jwt_email_is_mailed(settings: Settings, client: Client):
    """Mallory's token names victim@example.org, and does not say it is verified: her
    outcome is not mailed there. Vera's token says `email_verified: true`: mailed. Ida's
    issuer has no such claim, and `JWT_EMAILS_VERIFIED` says its addresses are verified:
    mailed."""
    suffix = uuid.uuid4().hex[:8]
    mallory, vera, ida = (f"{who}-{suffix}" for who in ("mallory", "vera", "ida"))

    def token(sub: str, **extra: Any) -> dict[str, str]:
        return bearer(jwt.encode(claims(sub, **extra), SECRET, algorithm="HS256"))

    async def sign_in(*tokens: dict[str, str], **overrides: Any) -> None:
        auth = {"auth_mode": "jwt", "jwt_secret": SECRET, **JWT, **overrides}
        async with gateway(settings, client, **auth) as http:
            for headers in tokens:
                assert (await http.get("/me", headers=headers)).status_code == 200

    await sign_in(
        token(mallory, email="victim@example.org", name="Mallory"),
        token(vera, email="vera@example.com", email_verified=True),
    )
    await sign_in(token(ida, email="ida@example.com"), jwt_emails_verified=True)

    mailed: list[list[str]] = []

    class Mailbox:
        async def handle_DATA(self, server: Any, session: Any, envelope: Envelope) -> str:
            mailed.append(envelope.rcpt_tos)
            return "250 OK"

    smtp = Controller(Mailbox(), hostname="127.0.0.1", port=free_port())
    smtp.start()
    engine = open_engine(settings.store_url)
    try:
        smtp_url = SecretStr(f"smtp://127.0.0.1:{smtp.port}")
        notifier = Notifier(client, Settings(data_dir=settings.data_dir, smtp_url=smtp_url), engine)
        for principal in (mallory, vera, ida):
            outcome = Notice(
                key=f"chain-{suffix}:{principal}:outcome",
                kind="outcome",
                principal=principal,
                thread_id=f"inbox:{principal}",
                chain_id=f"chain-{suffix}",
                title="refund 90 EUR",
                outcome="approved",
            )
            await ActivityEnvironment().run(notifier.notify, outcome)
    finally:
        await engine.dispose()
        smtp.stop()
    assert sorted(mailed) == [["ida@example.com"], ["vera@example.com"]]


async def test_a_store_that_fails_never_fails_the_request(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    """The claims are written once per value; a store without the table (never migrated)
    refuses the write: logged, and tried again later, never raised."""
    engine = open_engine(sqlite_url(tmp_path / "never-migrated.sqlite3"))
    claimed = ClaimedPeople()
    try:
        await claimed.note(KnownPeople(engine), "pat", "pat@example.com", None)
        assert "could not remember the email of pat: OperationalError" in caplog.text
        await upgrade(sqlite_url(tmp_path / "never-migrated.sqlite3"))
        await claimed.note(KnownPeople(engine), "pat", "pat@example.com", None)
        assert await KnownPeople(engine).get("pat") is None  # not before RETRY_AFTER
        claimed.seen.clear()
        await claimed.note(KnownPeople(engine), "pat", "pat@example.com", None)
        assert await KnownPeople(engine).get("pat") == ("pat@example.com", None)
    finally:
        await engine.dispose()


# -- none --------------------------------------------------------------------------------------


async def test_none_mode_everyone_is_anonymous(
    settings: Settings, client: Client, worker: Worker, thread_id: str
):
    async with gateway(settings, client, auth_mode="none") as http:
        [item] = interrupts(await events(http, run_body(thread_id, EMAIL), {"X-Principal": "x"}))
        resumed = run_body(thread_id, resume=[resolve(item, {"approved": True})])
        assert finished(await events(http, resumed))["outcome"]["type"] == "success"
    assert (await thread_state(client, thread_id)).owner == "anonymous"


# -- interrupts for a group ------------------------------------------------------------------


class GroupAskInput(BaseModel):
    thread_id: str
    team: str
    group: str
    thread_task_queue: str


@workflow.defn(name="GroupAsk")
class GroupAsk:
    @workflow.run
    async def run(self, ask: GroupAskInput) -> dict[str, Any]:
        outcome = await ask_in_thread(
            ask.thread_id,
            message="Approve the budget?",
            response_schema={"type": "object", "required": ["ok"]},
            allowed_resolvers=[f"group:{ask.group}"],
            thread_task_queue=ask.thread_task_queue,
            thread_owner=f"group:{ask.team}",  # who sees it; only the group above answers
        )
        return {"status": outcome.status, "payload": outcome.payload}


async def test_an_interrupt_for_a_group_is_answered_by_a_member_only(
    settings: Settings, client: Client, worker: Worker, thread_id: str
):
    tag = uuid.uuid4().hex[:6]
    team, group, queue = f"team-{tag}", f"finance-{tag}", f"group-ask-{tag}"

    def token(sub: str, *groups: str) -> dict[str, str]:
        return bearer(jwt.encode(claims(sub, groups=list(groups)), SECRET, algorithm="HS256"))

    carol, mallory = token("carol", team, group), token("mallory", team, "other")
    eve, oscar = token(f"group:{group}"), token("oscar", "other")
    async with (
        Worker(
            client, task_queue=queue, workflows=[GroupAsk],
            workflow_runner=UnsandboxedWorkflowRunner(),
        ),
        gateway(settings, client, auth_mode="jwt", jwt_secret=SECRET, **JWT) as http,
    ):  # fmt: skip
        ask = GroupAskInput(
            thread_id=thread_id, team=team, group=group, thread_task_queue=settings.task_queue
        )
        handle = await client.start_workflow(GroupAsk.run, ask, id=new_id("ask"), task_queue=queue)
        for _ in range(400):  # the offer reaches the thread through an activity
            with contextlib.suppress(RPCError):
                if (await thread_state(client, thread_id)).interrupts:
                    break
            await asyncio.sleep(0.05)
        # the producer named the thread's owner: the team sees it, nobody else
        outsider = error(await events(http, run_body(thread_id), oscar, "inbox"))
        assert outsider["code"] == "FORBIDDEN"
        [item] = interrupts(await events(http, run_body(thread_id), mallory, "inbox"))
        before = await thread_state(client, thread_id)
        assert before.owner == f"group:{team}"
        answer = run_body(thread_id, resume=[resolve(item, {"ok": True})])
        assert_401(await post(http, answer, eve, "inbox"))  # no principal passes for a group
        refused = error(await events(http, answer, mallory, "inbox"))
        assert refused["code"] == "FORBIDDEN"
        [problem] = refused["metadata"]["tanstack"]["interruptErrors"]
        assert problem["interruptId"] == item["id"]
        assert await thread_state(client, thread_id) == before

        answer["runId"] = new_id()
        accepted = await events(http, answer, carol, "inbox")
        assert finished(accepted)["outcome"]["type"] == "success"
        assert await handle.result() == {"status": "resolved", "payload": {"ok": True}}
    [record] = (await thread_state(client, thread_id)).interrupts
    assert record.resolved_by == "carol"


# -- a chain step for a group -----------------------------------------------------------


async def test_a_chain_step_for_a_group_waits_in_the_group_inbox(
    http: httpx.AsyncClient, settings: Settings, client: Client
):
    group = f"fin-{uuid.uuid4().hex[:6]}"
    chain_id = new_id("chain")
    definition = ChainDefinition(
        name="g", steps=[ChainStep(name="finance", approvers=[f"group:{group}"])]
    )
    chain = ChainInput(
        chain_id=chain_id,
        definition=definition,
        thread_task_queue=settings.task_queue,
        index=False,
    )
    handle = await client.start_workflow(
        ApprovalChain.run, chain, id=chain_id, task_queue=settings.task_queue
    )
    inbox = inbox_thread(f"group:{group}")
    for _ in range(400):  # the offer reaches the inbox through an activity
        with contextlib.suppress(RPCError):
            if (await thread_state(client, inbox)).interrupts:
                break
        await asyncio.sleep(0.05)
    carol = {"X-Principal": "carol", "X-Principal-Groups": f"ops, {group}"}
    outsider = error(await events(http, run_body(inbox), {"X-Principal": "mallory"}, "inbox"))
    assert outsider["code"] == "FORBIDDEN"  # the group's inbox is its members'
    [item] = interrupts(await events(http, run_body(inbox), carol, "inbox"))
    answer = run_body(inbox, resume=[resolve(item, {"decision": "approve"})])
    assert finished(await events(http, answer, carol, "inbox"))["outcome"]["type"] == "success"
    result: ChainView = await handle.result()
    assert result.status == "approved"
    [decision] = [e for e in result.audit if e.kind == "decision"]
    assert (decision.principal, decision.step) == ("carol", "finance")
