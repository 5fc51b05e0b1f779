"""Prometheus metrics of one gateway (`GET /metrics`): runs, resumes, refusals by code
and open SSE streams, in a registry per app (so apps in one process never collide).

Interrupts live in workflows, which do no I/O: the worker exports
`agui_interrupts_opened_total` and `agui_interrupts_settled_total`
(see workflows/thread/_meters.py).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator
from contextvars import ContextVar
from typing import Any

from ag_ui.core import RunAgentInput
from fastapi import Depends, FastAPI, Request, Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    generate_latest,
)
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ag_ui_temporal.gateway.deps import AuthenticatedRoute, get_principal
from ag_ui_temporal.gateway.streaming import Batch

log = logging.getLogger("ag_ui_temporal.gateway.runs")  # the run lines belong with the runs


class GatewayMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.runs = Counter(
            "agui_runs", "runs POSTed (re-attaches not counted)", registry=self.registry
        )
        self.resumes = Counter(
            "agui_resumes",
            "runs POSTed with a resume (answers to interrupts)",
            registry=self.registry,
        )
        self.rejections = Counter(
            "agui_run_rejections",
            "RUN_ERROR events sent, by their code",
            ["code"],
            registry=self.registry,
        )
        self.sse_streams = Gauge(
            "agui_sse_streams", "SSE streams open now (runs and joins)", registry=self.registry
        )


_CURRENT: ContextVar[GatewayMetrics | None] = ContextVar("agui_gateway_metrics", default=None)


def current_metrics() -> GatewayMetrics | None:
    """The metrics of the app serving this request (none outside a request)."""
    return _CURRENT.get()


class MetricsMiddleware:
    """Makes the app's metrics current for the request and counts its SSE stream, if any,
    for as long as the response is being sent."""

    def __init__(self, app: ASGIApp, metrics: GatewayMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        token = _CURRENT.set(self.metrics)
        streaming = False

        async def watch(message: Message) -> None:
            nonlocal streaming
            if message["type"] == "http.response.start" and _is_sse(message):
                streaming = True
                self.metrics.sse_streams.inc()
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            if streaming:
                self.metrics.sse_streams.dec()
            _CURRENT.reset(token)


def _is_sse(message: Message) -> bool:
    return any(
        name == b"content-type" and value.startswith(b"text/event-stream")
        for name, value in message.get("headers", [])
    )


async def observed_run(
    body: RunAgentInput, reattach: bool, events: AsyncIterator[Batch]
) -> AsyncGenerator[Batch, None]:
    """`events` unchanged, counted and logged: one line when the run ends or is refused."""
    metrics = current_metrics()
    if metrics is not None and not reattach:
        metrics.runs.inc()
        if body.resume:
            metrics.resumes.inc()
    async for batch in events:
        yield batch  # the client first; counting and logging can wait
        for item in batch:
            _observe(metrics, item.event)


def _observe(metrics: GatewayMetrics | None, event: dict[str, Any]) -> None:
    kind = event.get("type")
    if kind == "RUN_ERROR":
        code = str(event.get("code") or "UNKNOWN")
        if metrics is not None:
            metrics.rejections.labels(code=code).inc()
        log.info("run refused: %s", code, extra={"code": code})
    elif kind == "RUN_FINISHED":
        outcome = event.get("outcome") or {}
        ids = [str(i.get("id")) for i in outcome.get("interrupts") or []]
        extra = {"outcome": outcome.get("type", "success"), "open_interrupt_ids": ids}
        log.info("run finished: %s", extra["outcome"], extra=extra)


def add_metrics(app: FastAPI, *, public: bool = True) -> GatewayMetrics:
    """The app's metrics, its middleware and `GET /metrics` (call before the web mount);
    not `public`: the endpoint takes the API's credentials (`METRICS_PUBLIC`)."""
    metrics = GatewayMetrics()
    app.state.metrics = metrics
    app.add_middleware(MetricsMiddleware, metrics=metrics)

    async def get_metrics(request: Request) -> Response:
        registry = request.app.state.metrics.registry
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    app.router.add_api_route(
        "/metrics",
        get_metrics,
        methods=["GET"],
        include_in_schema=False,
        dependencies=[] if public else [Depends(get_principal)],
        route_class_override=AuthenticatedRoute,
    )
    return metrics
