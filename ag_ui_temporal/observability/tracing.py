"""OpenTelemetry tracing across gateway -> Temporal -> worker, off unless `OTEL_ENABLED`.

When off nothing here imports the SDK or adds an interceptor or middleware, so it
costs nothing. When on, each process exports spans over OTLP; the exporter reads
the standard `OTEL_EXPORTER_OTLP_*` variables, the resource `OTEL_SERVICE_NAME` and
`OTEL_RESOURCE_ATTRIBUTES`, the sampler `OTEL_TRACES_SAMPLER`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import TracerProvider as AnyTracerProvider
    from temporalio.client import Interceptor

    from ag_ui_temporal.settings import Settings

NOT_TRACED = "healthz,readyz,livez,metrics,decisions/"
"""Probe and scrape paths: frequent, and nothing to learn from their spans; and decision
links, whose path is a credential (a span would carry it as its target)."""


def setup_tracing(settings: Settings, service_name: str) -> TracerProvider | None:
    """The process's tracer provider (also made the global one), exporting over OTLP."""
    if not settings.otel_enabled:
        return None
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create(
        {} if os.environ.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: service_name}
    )
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return provider


def client_interceptors(
    settings: Settings, tracer_provider: AnyTracerProvider | None = None
) -> list[Interceptor]:
    """Temporal's tracing interceptor for a client, and so for the workers built on it."""
    if not settings.otel_enabled:
        return []
    from opentelemetry import trace

    from ag_ui_temporal.observability._temporal_tracing import RunTracingInterceptor

    provider = tracer_provider or trace.get_tracer_provider()
    return [RunTracingInterceptor(provider.get_tracer("ag-ui-temporal"))]


def instrument_app(
    app: FastAPI, settings: Settings, tracer_provider: AnyTracerProvider | None = None
) -> None:
    """A server span per HTTP request, the parent of the run's Temporal spans."""
    if not settings.otel_enabled:
        return
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

    FastAPIInstrumentor.instrument_app(
        app,
        tracer_provider=tracer_provider,
        excluded_urls=NOT_TRACED,
        exclude_spans=["receive", "send"],  # not one span per SSE frame
    )
