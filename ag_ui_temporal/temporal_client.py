"""`connect()`: how every process (worker, gateway, CLI, examples, bench) reaches Temporal,
and `exit_stopped()`: how each leaves once it is done with it.

A module of its own beside settings.py (which holds settings only), so that the worker
and the gateway share it without importing each other.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING, NoReturn

from pydantic_ai.durable_exec.temporal import PydanticAIPayloadConverter
from temporalio.client import Client
from temporalio.converter import DataConverter

from ag_ui_temporal.observability.tracing import client_interceptors
from ag_ui_temporal.payloads import CODEC
from ag_ui_temporal.settings import Settings

DATA_CONVERTER = DataConverter(
    payload_converter_class=PydanticAIPayloadConverter, payload_codec=CODEC
)
"""temporalio's pydantic converter (the JSON `payloads.PayloadConverter` writes), whose
`TypeAdapter`s are built once per worker: each workflow instance makes its own payload
converter, so the plain pydantic converter's per-instance cache rebuilt every adapter
(pydantic-ai's `ModelResponse` among them) in every cached thread, costing CPU on each
thread's first tasks and memory for as long as the thread stays cached. pydantic-ai's, as
it reads pydantic-ai's own messages back as they were written. Large payloads to and from
threads are compressed (`payloads.Compression`)."""

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
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


def exit_stopped(code: int = 0, *, tracer_provider: SdkTracerProvider | None = None) -> NoReturn:
    """Exit with `code` from a process that ran to its end, without the interpreter's teardown:
    every entry point whose process used a Temporal client leaves through here.

    Temporal's bridge keeps Rust threads that may still call into Python while the
    interpreter finalizes, which aborts it (SIGABRT, exit -6, or "Fatal Python error:
    PyGILState_Release") after a perfect run: temporalio/sdk-python#300. Everything is
    done by now; flush what the process wrote (spans, logs, stdio) and leave."""
    if tracer_provider is not None:
        tracer_provider.shutdown()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
