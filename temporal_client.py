"""`connect()`: how every process (worker, gateway, CLI, examples, bench) reaches Temporal.

A module of its own beside settings.py (which holds settings only), so that the worker and
the gateway share it without importing each other.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from pydantic_ai.durable_exec.temporal import PydanticAIPayloadConverter
from temporalio.api.common.v1 import Payload
from temporalio.client import Client
from temporalio.converter import DataConverter, PayloadCodec

from observability.tracing import client_interceptors
from settings import Settings

ZLIB: Final = b"binary/zlib"
"""The `encoding` of a compressed payload: its data is the original `Payload`, serialized
and deflated."""


class Compression(PayloadCodec):
    """Deflates payloads over `SMALLEST` bytes that shrink by a tenth or more: the JSON of
    transcripts, runs' events and model requests (3-5x), which Temporal stores in every
    history, sends to workers and bills as storage. Payloads without `ZLIB` (histories
    from before, small ones) decode as they are."""

    SMALLEST = 1024
    LARGEST = 32 << 20
    """Bytes a payload may inflate to (Temporal refuses payloads far smaller): a bound
    against a crafted one."""

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self._deflated(payload) for payload in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self._inflated(payload) for payload in payloads]

    def _deflated(self, payload: Payload) -> Payload:
        if len(payload.data) < self.SMALLEST:
            return payload
        data = zlib.compress(payload.SerializeToString(), 6)
        if len(data) > 0.9 * payload.ByteSize():
            return payload
        return Payload(metadata={"encoding": ZLIB}, data=data)

    def _inflated(self, payload: Payload) -> Payload:
        if payload.metadata.get("encoding") != ZLIB:
            return payload
        inflater = zlib.decompressobj()
        data = inflater.decompress(payload.data, self.LARGEST)
        if inflater.unconsumed_tail or not inflater.eof:
            raise ValueError(f"a compressed payload inflates past {self.LARGEST} bytes")
        return Payload.FromString(data)


CODEC: Final = Compression()
"""The codec of `DATA_CONVERTER` (`CODEC.decode` reads payloads from a history)."""
DATA_CONVERTER = DataConverter(
    payload_converter_class=PydanticAIPayloadConverter, payload_codec=CODEC
)
"""temporalio's pydantic converter (the same JSON), whose `TypeAdapter`s are built once per
worker: each workflow instance makes its own payload converter, so the plain pydantic
converter's per-instance cache rebuilt every adapter (pydantic-ai's `ModelResponse` among
them) in every cached thread, costing CPU on each thread's first tasks and memory for as
long as the thread stays cached. Large payloads are compressed (`Compression`)."""

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
