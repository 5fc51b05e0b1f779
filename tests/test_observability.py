"""Observability: JSON logs with run context and no secrets, one trace per POST across
gateway -> Temporal -> worker, Prometheus metrics of the gateway and of the worker.

Every test runs real processes' code on the real dev server: its own gateway (and,
where the test needs one, its own worker, client and Temporal runtime).
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr
from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from ag_ui_temporal.gateway.main import create_app
from ag_ui_temporal.observability.logs import (
    MAX_LINE,
    log_handler,
    redact,
    register_secret,
    settings_secrets,
)
from ag_ui_temporal.observability.worker_metrics import metrics_runtime
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.temporal_client import connect
from ag_ui_temporal.worker import build_worker
from ag_ui_temporal.workflows.contract import THREAD_WORKFLOW
from tests.agui import interrupts, new_id, parse_sse, resolve, run, user
from tests.conftest import free_port, serve_app
from tests.gateway.conftest import GatedTools

APPROVE = {"approved": True}


@asynccontextmanager
async def serving(app: FastAPI, **config: Any) -> AsyncIterator[httpx.AsyncClient]:
    """The app on a real loopback port, and an HTTP client for it."""
    async with serve_app(app, **config) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        yield http


@pytest.fixture
def captured() -> Iterator[io.StringIO]:
    """Every record of the process, as the JSON lines the processes write."""
    buffer = io.StringIO()
    handler = log_handler("json", buffer)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    # Servers started earlier with uvicorn's default log config stop its loggers from
    # propagating; a gateway process configures logging once (`observe`), so they do.
    uvicorn_loggers = [logging.getLogger(name) for name in ("uvicorn", "uvicorn.access")]
    propagate = [logger.propagate for logger in uvicorn_loggers]
    for logger in uvicorn_loggers:
        logger.propagate = True
    try:
        yield buffer
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        for logger, before in zip(uvicorn_loggers, propagate, strict=True):
            logger.propagate = before


def json_lines(buffer: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in buffer.getvalue().splitlines() if line.strip()]


# -- logs ------------------------------------------------------------------------


async def test_run_logs_are_json_with_ids_and_no_secret(
    client: Client, settings: Settings, worker: Worker, captured: io.StringIO, thread_id: str
):
    token = f"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ{uuid.uuid4().hex}.sig{uuid.uuid4().hex}"
    api_key = f"key-{uuid.uuid4().hex}"
    in_query = f"q-{uuid.uuid4().hex}"
    headers = {"Authorization": f"Bearer {token}", "X-API-Key": api_key, "X-Principal": "alice"}
    app = create_app(settings, client)
    async with serving(app, log_config=None, log_level="info") as http:  # as `cli gateway`
        run_id = new_id()
        message = user("Send an email to a@b.co")
        body = {"threadId": thread_id, "runId": run_id, "messages": [message]}
        response = await http.post(
            f"/agents/assistant?api_key={in_query}", json=body, headers=headers
        )
        assert interrupts(parse_sse(response.text))
        link = "eyJhbGciOiJIUzI1NiJ9.a-decision-link.c2lnbmVk"  # a link's token is a credential
        assert (await http.get(f"/decisions/{link}")).status_code == 404
    text = captured.getvalue()
    for secret in (token, api_key, in_query):
        assert secret not in text
    served = [line["message"] for line in json_lines(captured) if line["logger"] != "httpx"]
    assert not any(link in message for message in served)  # (the test's own client logs it)
    assert any('"GET /decisions/[redacted] HTTP/1.1" 404' in message for message in served)
    lines = json_lines(captured)
    ours = [line for line in lines if line.get("run_id") == run_id]
    assert {line["thread_id"] for line in ours} == {thread_id}
    assert {line["principal"] for line in ours} == {"alice"}
    finish = next(line for line in ours if line["message"].startswith("run finished"))
    assert finish["outcome"] == "interrupt" and finish["open_interrupt_ids"]
    access = next(line for line in ours if line["logger"] == "uvicorn.access")
    assert '"POST /agents/assistant HTTP/1.1" 200' in access["message"]  # the path, no query


async def test_resume_logs_name_the_interrupts_answered(
    http: httpx.AsyncClient, captured: io.StringIO, thread_id: str
):
    asked = interrupts(await run(http, thread_id, text="Send an email to a@b.co"))
    run_id = new_id()
    await run(http, thread_id, resume=[resolve(asked[0], APPROVE)], run_id=run_id)
    ours = [line for line in json_lines(captured) if line.get("run_id") == run_id]
    assert ours and all(line["interrupt_ids"] == [asked[0]["id"]] for line in ours)


def test_secrets_are_redacted_wherever_they_appear(captured: io.StringIO):
    chat = f"slack://T0/B0/{uuid.uuid4().hex}"  # an Apprise URL holds its service's token
    settings = Settings(
        temporal_api_key=SecretStr(f"tk-{uuid.uuid4().hex}"), apprise_urls=[SecretStr(chat)]
    )
    secret = settings_secrets(settings)[0]
    assert chat in settings_secrets(settings)
    assert secret not in repr(settings) and secret not in str(settings.model_dump())
    register_secret(secret)
    log = logging.getLogger("tests.observability")
    try:
        raise RuntimeError(f"could not connect with {secret}")
    except RuntimeError:
        log.exception("connect failed", extra={"headers": {"authorization": "Basic dXNlcjpw"}})
    text = captured.getvalue()
    assert secret not in text and "dXNlcjpw" not in text
    assert json_lines(captured)[-1]["exc_info"].endswith("could not connect with [REDACTED]")
    assert redact("GET /x?token=abc&page=2") == "GET /x?token=[REDACTED]&page=2"


# -- redaction never stalls a process ----------------------------------------------

ATTACKS = {
    "sensitive names": "token",
    "jwt starts": "-eyJ",
    "bearer words": "bearer ",
    "name-value pairs": "api_key=x&",
    "quoted keys": '"password": ',
}


def redaction_seconds(*texts: str, runs: int = 15) -> list[float]:
    """Each text's best of `runs`, the texts taken in turn (the machine is shared: the
    minimum is the least noisy, and a busy spell slows each text, not one of them)."""
    best = [float("inf")] * len(texts)
    for _ in range(runs):
        for i, text in enumerate(texts):
            start = time.perf_counter()
            redact(text)
            best[i] = min(best[i], time.perf_counter() - start)
    return best


@pytest.mark.parametrize("unit", ATTACKS.values(), ids=ATTACKS.keys())
def test_redaction_time_is_linear_in_the_line(unit: str):
    """10x the text costs about 10x the time (quadratic: 100x; `token`x8000 took 12.7 s)."""
    small = unit * (MAX_LINE // 10 // len(unit))
    large = unit * (MAX_LINE // len(unit))
    assert len(large) <= MAX_LINE  # both redacted in full, not cut
    large_s, small_s = redaction_seconds(large, small)
    assert large_s < 40 * small_s + 0.001


def test_lines_past_the_bound_are_cut_with_a_marker_and_still_redacted():
    secret = f"sk-{uuid.uuid4().hex}"
    odd = f"p@ss w0rd!{uuid.uuid4().hex[:8]}"  # not only token characters
    register_secret(secret, odd)
    line = redact(f"Bearer {secret} api_key=abc " + "token" * 8000 + f" {secret}")
    assert line.startswith("Bearer [REDACTED] api_key=[REDACTED] ...[truncated")
    assert len(line) < MAX_LINE
    cut = redact("token=" + "日本" * MAX_LINE)  # the marker is never taken for a value
    assert cut.startswith("token=[REDACTED] ...[truncated") and cut.endswith(" characters]")
    for known in (secret, odd):
        for kept in range(1, len(known)):  # a secret cut by the bound leaves none of itself
            head = "#" * (MAX_LINE - kept)
            assert redact(head + known + "#" * 10).startswith(head + " ...[truncated")
    # the guarantees of short lines stand
    assert redact("GET /x?token=abc&page=2") == "GET /x?token=[REDACTED]&page=2"
    assert redact('{"authorization": "Basic dXNlcjpw"}') == (
        '{"authorization": "[REDACTED] [REDACTED]"}'
    )
    assert redact('{\\"password\\": \\"hunter2\\"}') == '{\\"password\\": \\"[REDACTED]\\"}'


def test_a_huge_record_is_one_json_line_cut_and_redacted(captured: io.StringIO):
    logging.getLogger("tests.observability").warning("asked %s", "api_key=abc " * 10_000)
    [line] = json_lines(captured)[-1:]
    assert line["logger"] == "tests.observability" and line["level"] == "WARNING"
    assert line["message"].startswith("asked api_key=[REDACTED]")
    assert "...[truncated" in line["message"] and "abc" not in line["message"]
    assert line["truncated_line_length"] > MAX_LINE


async def test_a_huge_query_string_holds_up_no_other_request(
    settings: Settings, client: Client, captured: io.StringIO
):
    """The issue's attack (`GET /healthz?q=` + `token`x8000, 12.7 s of a frozen gateway), with
    a 40 KB credential header too: plain requests beside it are served as fast as alone."""
    attack = {"params": {"q": "token" * 8000}, "headers": {"X-Api-Key": "token=" * 8000}}
    async with serving(create_app(settings, client), log_config=None, log_level="info") as http:

        async def timed(**request: Any) -> float:
            start = time.perf_counter()
            response = await http.get("/healthz", **request)
            assert response.status_code == 200, response.text
            return time.perf_counter() - start

        alone = sorted([await timed() for _ in range(7)])[3]
        beside = await asyncio.gather(*(timed(**attack) for _ in range(4)), timed(), timed())
    # before: 12.7 s against a millisecond or two; a floor of 3 s, as the fuzzers' pace has,
    # so a busy machine's pause (seen: every request at once 0.8 s) is not taken for it
    assert max(beside) < max(200 * alone, 3.0)
    access = [
        line["message"] for line in json_lines(captured) if line["logger"] == "uvicorn.access"
    ]
    assert sum('"GET /healthz HTTP/1.1" 200' in message for message in access) >= 13
    assert not any("?" in message or "token" in message for message in access)


@activity.defn(name="say")
async def say(text: str) -> str:
    activity.logger.info("saying %s", text)
    return text


@workflow.defn(name="obs-log-once")
class LogOnce:
    @workflow.run
    async def run(self, text: str) -> str:
        workflow.logger.info("logging %s", text)
        return await workflow.execute_activity(
            say, text, start_to_close_timeout=timedelta(seconds=30)
        )


async def test_worker_logs_carry_temporal_info_as_json_objects(
    client: Client, captured: io.StringIO
):
    queue = f"obs-{uuid.uuid4().hex[:8]}"
    async with Worker(
        client,
        task_queue=queue,
        workflows=[LogOnce],
        activities=[say],
        workflow_runner=UnsandboxedWorkflowRunner(),
    ):
        await client.execute_workflow(LogOnce.run, "hi", id=queue, task_queue=queue)
    lines = json_lines(captured)
    said = next(line for line in lines if line["message"].startswith("saying hi"))
    assert said["temporal_activity"]["activity_type"] == "say"
    logged = next(line for line in lines if line["message"].startswith("logging hi"))
    assert logged["temporal_workflow"]["workflow_id"] == queue


# -- traces ----------------------------------------------------------------------


def trace_of(spans: tuple[ReadableSpan, ...], span: ReadableSpan) -> set[str]:
    assert span.context is not None
    return {s.name for s in spans if s.context and s.context.trace_id == span.context.trace_id}


async def server_span(exporter: InMemorySpanExporter, seen: int) -> ReadableSpan:
    """The next POST's HTTP server span (it ends just after the response body)."""
    for _ in range(1000):
        posts = [
            s
            for s in exporter.get_finished_spans()
            if s.name == "POST /agents/{agent}" and s.kind.name == "SERVER"
        ]
        if len(posts) > seen:
            return posts[seen]
        await asyncio.sleep(0.01)
    raise AssertionError("the gateway's server span never ended")


async def test_one_trace_per_post_across_gateway_temporal_and_worker(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor, thread_id: str
):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    queue = f"traced-{uuid.uuid4().hex[:8]}"
    settings = Settings(
        data_dir=data_dir / queue,
        task_queue=queue,
        otel_enabled=True,
        temporal_address=client.service_client.config.target_host,
    )
    traced = await connect(settings, tracer_provider=provider)
    app = create_app(settings, traced, tracer_provider=provider)
    async with build_worker(traced, settings, executor), serving(app) as http:
        asked = interrupts(await run(http, thread_id, text="Send an email to a@b.co"))
        first = trace_of(exporter.get_finished_spans(), await server_span(exporter, 0))
        await run(http, thread_id, resume=[resolve(asked[0], APPROVE)])
        second = trace_of(exporter.get_finished_spans(), await server_span(exporter, 1))
    start = f"StartUpdateWithStartWorkflow:{THREAD_WORKFLOW}"
    assert {start, "ValidateUpdate:run", "HandleUpdate:run"} <= first
    # the resume's own trace, not the thread's first one: its update (a plain one: the
    # thread exists) and its tool
    resumed = {"StartWorkflowUpdate:run", "HandleUpdate:run"}
    assert resumed | {"StartActivity:sendEmail", "RunActivity:sendEmail"} <= second
    assert "RunActivity:sendEmail" not in first


def test_tracing_is_off_by_default():
    assert Settings().otel_enabled is False
    app = create_app(Settings())
    assert not any("OpenTelemetry" in getattr(m.cls, "__name__", "") for m in app.user_middleware)


# -- metrics ---------------------------------------------------------------------


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def total(text: str, name: str, **labels: str) -> float:
    """The sum of `name` over the series that carry `labels`."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in samples(text).items() if n == name and wanted <= ls)


async def test_gateway_and_worker_metrics_move(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor, thread_id: str
):
    queue = f"metered-{uuid.uuid4().hex[:8]}"
    settings = Settings(
        data_dir=data_dir / queue,
        task_queue=queue,
        temporal_address=client.service_client.config.target_host,
        worker_metrics_port=free_port(),
    )
    # A dedicated runtime (process-wide machinery in temporalio) for this worker's client.
    metered = await connect(settings, runtime=metrics_runtime(settings))
    gate = threading.Event()
    tools = GatedTools(settings.store_url, gate)
    worker_url = f"http://127.0.0.1:{settings.worker_metrics_port}/metrics"
    async with (
        build_worker(metered, settings, executor, tools.activities()),
        serving(create_app(settings, client)) as http,
    ):
        before = (await http.get("/metrics")).text
        asked = interrupts(await run(http, thread_id, text="Send an email to a@b.co"))
        refused = await run(http, thread_id, text="and another one")
        assert refused[-1]["code"] == "RESUME_REQUIRED"
        body: dict[str, Any] = {"threadId": thread_id, "runId": new_id(), "messages": []}
        body["resume"] = [resolve(asked[0], APPROVE)]
        resume = asyncio.create_task(http.post("/agents/assistant", json=body))
        while total((await http.get("/metrics")).text, "agui_sse_streams") < 1:
            await asyncio.sleep(0.01)  # the resumed run waits at the gate: its stream is open
        gate.set()
        assert (await resume).status_code == 200
        after = (await http.get("/metrics")).text
        async with httpx.AsyncClient() as scraper:
            from_worker = (await scraper.get(worker_url)).text
    gate.set()
    assert total(after, "agui_runs_total") - total(before, "agui_runs_total") == 3
    assert total(after, "agui_resumes_total") - total(before, "agui_resumes_total") == 1
    rejected = "agui_run_rejections_total"
    code = {"code": "RESUME_REQUIRED"}
    assert total(after, rejected, **code) - total(before, rejected, **code) == 1
    assert total(after, "agui_sse_streams") == 0
    assert total(from_worker, "agui_interrupts_opened_total", reason="tool_call") == 1
    assert total(from_worker, "agui_interrupts_settled_total", status="resolved") == 1
