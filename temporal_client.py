"""`connect()`: how every process (worker, gateway, CLI, examples, bench) reaches Temporal.

A module of its own beside settings.py (which holds settings only), so that the worker and
the gateway share it without importing each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic_ai.durable_exec.temporal import PydanticAIPayloadConverter
from temporalio.client import Client
from temporalio.converter import DataConverter

from observability.tracing import client_interceptors
from settings import Settings

DATA_CONVERTER = DataConverter(payload_converter_class=PydanticAIPayloadConverter)
"""temporalio's pydantic converter (the same JSON), whose `TypeAdapter`s are built once per
worker: each workflow instance makes its own payload converter, so the plain pydantic
converter's per-instance cache rebuilt every adapter (pydantic-ai's `ModelResponse` among
them) in every cached thread, costing CPU on each thread's first tasks and memory for as
long as the thread stays cached."""

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider
    from temporalio.runtime import Runtime


async def connect(
    settings: Settings,
    *,
    runtime: Runtime | None = None,
    tracer_provider: TracerProvider | None = None,
) -> Client:
    """A Temporal client with the pydantic data converter every process must share
    (and, with `OTEL_ENABLED`, the tracing interceptor its workers inherit)."""
    api_key = settings.temporal_api_key
    return await Client.connect(
        settings.temporal_address,
        namespace=settings.temporal_namespace,
        data_converter=DATA_CONVERTER,
        tls=settings.tls_config(),
        api_key=api_key.get_secret_value() if api_key else None,
        interceptors=client_interceptors(settings, tracer_provider),
        runtime=runtime,
    )
