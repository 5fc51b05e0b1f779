"""`connect()`: how every process (worker, gateway, CLI, examples, bench) reaches Temporal,
and `exit_stopped()`: how each leaves once it is done with it.

A module of its own beside settings.py (which holds settings only), so that the worker
and the gateway share it without importing each other.
"""

from __future__ import annotations

import asyncio
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


class TemporalUnreachable(RuntimeError):
    """No Temporal server answered at `TEMPORAL_ADDRESS`; the message says why in words
    (`reason`), naming the setting. What the SDK raised is its `__cause__`."""

    def __init__(self, address: str, reason: str) -> None:
        super().__init__(f"no Temporal server answers at {address} (TEMPORAL_ADDRESS): {reason}")
        self.address = address
        self.reason = reason


async def connect(
    settings: Settings,
    *,
    runtime: Runtime | None = None,
    tracer_provider: TracerProvider | None = None,
) -> Client:
    """A Temporal client with the pydantic data converter every process must share
    (and, with `OTEL_ENABLED`, the tracing interceptor its workers inherit). A server that
    cannot be reached is a `TemporalUnreachable`, at once when nothing listens."""
    api_key = settings.temporal_api_key
    try:
        return await Client.connect(
            settings.temporal_address,
            namespace=settings.temporal_namespace,
            data_converter=DATA_CONVERTER,
            tls=settings.tls_config(),
            api_key=api_key.get_secret_value() if api_key else None,
            interceptors=client_interceptors(settings, tracer_provider),
            runtime=runtime,
        )
    except RuntimeError as err:
        if not str(err).startswith(_FAILED_CONNECT):
            raise
        raise TemporalUnreachable(settings.temporal_address, plain_reason(err)) from err


_FAILED_CONNECT = "Failed client connect: "
"""How the SDK's `Client.connect` words each failure to reach the server (a `RuntimeError`
whose rest is a Rust error's debug form)."""


def plain_reason(err: Exception) -> str:
    """Why a connect failed, in words (the SDK's own is a Rust error's debug form)."""
    text = str(err).removeprefix(_FAILED_CONNECT)
    if "Connection refused" in text:
        return "nothing listens there (connection refused)"
    if "dns error" in text:
        return "its host name does not resolve"
    if "Timeout expired" in text:
        return "it took the connection but did not answer (is it a Temporal frontend?)"
    return text[:300]


async def connect_unless_stopped(
    settings: Settings, stop: asyncio.Event, *, runtime: Runtime | None = None
) -> Client | None:
    """A client, or None when `stop` is set first: a server that accepts connections but does
    not answer keeps `connect` waiting (the SDK's ~30 s), and a stop must not wait for it."""
    connecting = asyncio.ensure_future(connect(settings, runtime=runtime))
    stopped = asyncio.ensure_future(stop.wait())
    await asyncio.wait((connecting, stopped), return_when=asyncio.FIRST_COMPLETED)
    stopped.cancel()
    if connecting.done():
        return connecting.result()
    connecting.cancel()
    return None


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
