"""Who may read approval chains, and what a page of `GET /approvals` costs.

Against the dev server (search attributes and memos need it), over real HTTP with dev
auth (`X-Principal`). A client interceptor counts the gateway's Temporal calls.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from temporalio.client import (
    Client,
    DescribeWorkflowInput,
    Interceptor,
    ListWorkflowsInput,
    OutboundInterceptor,
    QueryWorkflowInput,
    StartWorkflowUpdateInput,
    StartWorkflowUpdateWithStartInput,
    WorkflowExecutionAsyncIterator,
    WorkflowExecutionDescription,
    WorkflowHandle,
    WorkflowUpdateHandle,
)
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment
from temporalio.worker import Worker

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.chains.definitions import ChainDefinition, ChainInput, ChainStep
from ag_ui_temporal.workflows.chains.workflow import ApprovalChain
from ag_ui_temporal.workflows.contract import ThreadSignal
from ag_ui_temporal.workflows.contract.chains import CHAIN_QUERY, ChainView, inbox_thread
from ag_ui_temporal.workflows.producers.thread_signals import ThreadSignals
from tests.conftest import serve_gateway


class CountingInterceptor(Interceptor):
    """Counts the queries, visibility listings, describes and updates a client makes."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    def intercept_client(self, next: OutboundInterceptor) -> OutboundInterceptor:
        return _Counting(next, self.calls)


class _Counting(OutboundInterceptor):
    def __init__(self, next: OutboundInterceptor, calls: Counter[str]) -> None:
        super().__init__(next)
        self.calls = calls

    async def query_workflow(self, input: QueryWorkflowInput) -> Any:
        self.calls["query"] += 1
        return await super().query_workflow(input)

    def list_workflows(self, input: ListWorkflowsInput) -> WorkflowExecutionAsyncIterator:
        self.calls["list"] += 1
        return super().list_workflows(input)

    async def describe_workflow(self, input: DescribeWorkflowInput) -> WorkflowExecutionDescription:
        self.calls["describe"] += 1
        return await super().describe_workflow(input)

    async def start_workflow_update(self, input: StartWorkflowUpdateInput) -> WorkflowUpdateHandle:
        self.calls["update"] += 1
        return await super().start_workflow_update(input)

    async def start_update_with_start_workflow(
        self, input: StartWorkflowUpdateWithStartInput
    ) -> WorkflowUpdateHandle:
        self.calls["update"] += 1
        return await super().start_update_with_start_workflow(input)


def counting_client(client: Client, counter: CountingInterceptor) -> Client:
    """`client`, counting the calls the gateway makes with it."""
    return Client(
        client.service_client,
        namespace=client.namespace,
        data_converter=client.data_converter,
        interceptors=[counter],
    )


@pytest.fixture(scope="module")
def counter() -> CountingInterceptor:
    return CountingInterceptor()


@pytest.fixture(scope="module")
async def approvals_http(
    settings: Settings, client: Client, worker: Worker, counter: CountingInterceptor
) -> AsyncIterator[httpx.AsyncClient]:
    admins = settings.model_copy(update={"approvals_admins": ["auditor", "group:audit"]})
    async with (
        serve_gateway(admins, counting_client(client, counter)) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        yield http


async def start_chain(
    client: Client, settings: Settings, approvers: list[str], **fields: Any
) -> WorkflowHandle:
    chain_id = f"chain-{uuid.uuid4().hex[:10]}"
    definition = ChainDefinition(name="t", steps=[ChainStep(name="only", approvers=approvers)])
    return await client.start_workflow(
        ApprovalChain.run,
        ChainInput(
            chain_id=chain_id,
            definition=definition,
            thread_task_queue=settings.task_queue,
            **fields,
        ),
        id=chain_id,
        task_queue=settings.task_queue,
    )


def as_(principal: str, groups: str | None = None) -> dict[str, str]:
    headers = {"X-Principal": principal}
    if groups:
        headers["X-Principal-Groups"] = groups
    return headers


async def test_a_chain_is_shown_to_its_participants_and_admins_only(
    approvals_http: httpx.AsyncClient, client: Client, settings: Settings
):
    tag = uuid.uuid4().hex[:6]
    alice, bob = f"alice-{tag}", f"bob-{tag}"
    handle = await start_chain(client, settings, [bob], requester=alice)
    async with asyncio.timeout(60):
        while not (await handle.query(CHAIN_QUERY, result_type=ChainView)).steps[0].slots:
            await asyncio.sleep(0.05)
    path = f"/approvals/{handle.id}"
    for headers in (as_(alice), as_(bob), as_("auditor"), as_("eve", "audit,other")):
        shown = await approvals_http.get(path, headers=headers)
        assert shown.status_code == 200, headers
        assert shown.json()["chain_id"] == handle.id
    missing = await approvals_http.get(f"/approvals/chain-{tag}-nope", headers=as_(alice))
    for headers in (as_("mallory"), as_("mallory", "finance"), {}):
        refused = await approvals_http.get(path, headers=headers)
        assert refused.status_code == 404, headers
        assert refused.json()["detail"].startswith("no approval chain")  # as for no chain
    assert missing.status_code == 404
    # a thread's workflow id is no chain either (a 404, not a failed query's 500)
    thread = await approvals_http.get("/approvals/agui-thread:x", headers=as_("auditor"))
    assert thread.status_code == 404
    # lists: one's own, or anyone's for an admin
    listing = {"assignee": bob}
    assert (await approvals_http.get("/approvals", params=listing)).status_code == 403
    mallory = await approvals_http.get("/approvals", params=listing, headers=as_("mallory"))
    assert mallory.status_code == 403
    admin = await approvals_http.get("/approvals", params=listing, headers=as_("auditor"))
    assert admin.status_code == 200


async def test_who_may_not_read_a_chain_is_told_at_once_without_a_query(
    approvals_http: httpx.AsyncClient,
    client: Client,
    settings: Settings,
    counter: CountingInterceptor,
):
    """Who may read is decided from `describe` (no worker needed): a non-participant, a
    workflow that is no chain, and a chain nobody serves get the 404 of a missing chain, and
    the gateway asks no worker anything (no query waits 30 s for one that does not exist)."""
    tag = uuid.uuid4().hex[:6]
    alice, bob = f"alice-{tag}", f"bob-{tag}"
    chain = await start_chain(client, settings, [bob], requester=alice)
    async with asyncio.timeout(60):
        while not (await chain.query(CHAIN_QUERY, result_type=ChainView)).steps[0].slots:
            await asyncio.sleep(0.05)
    nobody_serves = f"no-worker-{tag}"
    definition = ChainDefinition(name="t", steps=[ChainStep(name="only", approvers=[bob])])
    unserved = await client.start_workflow(
        "ApprovalChain",
        ChainInput(chain_id=f"unserved-{tag}", definition=definition, requester=alice),
        id=f"unserved-{tag}",
        task_queue=nobody_serves,
    )
    other = await client.start_workflow(
        "SomethingElse", "x", id=f"other-{tag}", task_queue=nobody_serves
    )
    try:
        answers = {}
        for path, headers in [
            (chain.id, as_("mallory")),
            (unserved.id, as_("mallory")),
            (unserved.id, as_(bob)),  # it never ran: nobody is seated yet
            (other.id, as_("auditor")),  # an admin's too: no chain
            (f"missing-{tag}", as_("mallory")),
        ]:
            counter.calls.clear()
            refused = await approvals_http.get(f"/approvals/{path}", headers=headers)
            assert refused.status_code == 404, (path, headers)
            assert "query" not in counter.calls and counter.calls["describe"] == 1
            answers[path] = refused.json()["detail"].replace(path, "ID")
        assert len(set(answers.values())) == 1  # word for word the same
        counter.calls.clear()
        shown = await approvals_http.get(f"/approvals/{chain.id}", headers=as_(alice))
        assert shown.status_code == 200 and counter.calls["query"] == 1
    finally:
        await unserved.terminate()
        await other.terminate()


async def test_a_page_of_200_costs_one_visibility_call_and_no_query(
    approvals_http: httpx.AsyncClient,
    client: Client,
    settings: Settings,
    counter: CountingInterceptor,
):
    bob = f"bob-{uuid.uuid4().hex[:6]}"
    handles = await asyncio.gather(
        *(start_chain(client, settings, [bob], requester="alice") for _ in range(30))
    )
    params = {"assignee": bob, "limit": "200"}
    async with asyncio.timeout(120):  # visibility and memos lag a little
        while True:
            page = (await approvals_http.get("/approvals", params=params, headers=as_(bob))).json()
            if len(page["items"]) == len(handles):
                break
            await asyncio.sleep(0.1)
    counter.calls.clear()
    page = (await approvals_http.get("/approvals", params=params, headers=as_(bob))).json()
    assert counter.calls == {"list": 1}  # a query per chain would make it 30
    assert {item["chain"] for item in page["items"]} == {h.id for h in handles}
    item = page["items"][0]
    assert (item["step"], item["requester"], item["status"]) == ("only", "alice", "waiting")
    assert item["thread"] == f"inbox:{bob}" and item["interrupt"].startswith("int-")
    assert item["chainStatus"] == "running" and item["expiresAt"] is None


async def test_an_offer_the_server_refuses_fails_fast_and_the_step_still_expires(
    client: Client, settings: Settings, worker: Worker
):
    """A 1,500-character inbox id is refused by the server (INVALID_ARGUMENT): the signal
    activity does not retry it forever, and the chain escalates and expires as usual."""
    long = "y" * 1500
    request = ThreadSignal(thread_id=inbox_thread(long), signal="post_message", arg={})
    with pytest.raises(ApplicationError) as refused:
        await ActivityEnvironment().run(ThreadSignals(client, settings).signal_thread, request)
    assert refused.value.non_retryable

    bob = f"bob-{uuid.uuid4().hex[:6]}"
    chain_id = f"chain-{uuid.uuid4().hex[:10]}"
    step = ChainStep(
        name="manager", approvers=[bob], expires_in=timedelta(seconds=1),
        on_expiry="escalate", escalate_to=long,
    )  # fmt: skip
    handle = await client.start_workflow(
        ApprovalChain.run,
        ChainInput(
            chain_id=chain_id,
            definition=ChainDefinition(name="t", steps=[step]),
            thread_task_queue=settings.task_queue,
        ),
        id=chain_id,
        task_queue=settings.task_queue,
    )
    async with asyncio.timeout(60):  # an endless retry would hang here
        result = ChainView.model_validate(await handle.result())
    assert result.status == "rejected"
    kinds = [e.kind for e in result.audit]
    assert kinds.index("escalated") < kinds.index("refused") < len(kinds) - 1
    [failed] = [e for e in result.audit if e.kind == "refused"]
    assert failed.note is not None and failed.note.startswith("offer failed")
    assert [s.failed for s in result.steps[0].slots] == [False, True]
