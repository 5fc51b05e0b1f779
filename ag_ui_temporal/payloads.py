"""How payloads look on the wire, for every worker that exchanges them with a thread: the
pydantic JSON converter and the codec that compresses a thread's large payloads.

Part of the core install (`pip install ag-ui-temporal`): the plugin gives a producer's worker
these (`AgUiTemporalPlugin`), with no agent framework, store or gateway installed. The thread
workers' converter (`temporal_client.DATA_CONVERTER`) writes the same JSON with pydantic-ai's
converter, which also reads its own message types back.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Sequence
from typing import Any, Final, Self

from pydantic import TypeAdapter
from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import (
    PydanticJSONPlainPayloadConverter,
    PydanticPayloadConverter,
    ToJsonOptions,
)
from temporalio.converter import (
    ActivitySerializationContext,
    CompositePayloadConverter,
    DefaultPayloadConverter,
    JSONPlainPayloadConverter,
    PayloadCodec,
    SerializationContext,
    WithSerializationContext,
    WorkflowSerializationContext,
)

from ag_ui_temporal.workflows.contract import thread_workflow_id

ZLIB: Final = b"binary/zlib"
"""The `encoding` of a compressed payload: its data is the original `Payload`, serialized
and deflated."""


OURS: Final = thread_workflow_id("")
"""The id prefix of the workflows whose payloads are compressed: threads, which only our
workers read. (Approval chains are ours too, but their ids, `expense-...` or any a caller
picks, are no prefix a team's workflow could not also have.)"""


def ours(context: SerializationContext | None) -> bool:
    """Whether a payload in this context is to or from a thread (its workflow task, an
    activity it runs, a client's call to it): only then does its reader know `ZLIB`."""
    if isinstance(context, WorkflowSerializationContext | ActivitySerializationContext):
        return (context.workflow_id or "").startswith(OURS)
    return False


class Compression(PayloadCodec, WithSerializationContext):
    """Deflates payloads over `SMALLEST` bytes that shrink by a tenth or more: the JSON of
    transcripts, runs' events and model requests (3-5x), which Temporal stores in every
    history, sends to workers and bills as storage. Payloads without `ZLIB` (small ones, and
    those of histories written without this codec) decode as they are.

    Only payloads whose serialization context names a thread are deflated (`ours`): what a
    thread sends a producer's workflow (the settlement signal, the claim update, the results
    of the activities the producer calls on the thread's queue) is read by the producer's
    own worker, whose plain `Client.connect()` knows no codec and would drop it. temporalio
    gives every payload the context of the workflow it goes to or comes from (an activity's
    input and result: the calling workflow's); without one (`CODEC` as it is), nothing is
    deflated. Decoding takes both forms in any context."""

    SMALLEST = 1024
    LARGEST = 32 << 20
    """Bytes a payload may inflate to (Temporal refuses payloads far smaller): a bound
    against a crafted one."""

    def __init__(self, *, deflate: bool = False) -> None:
        self.deflate = deflate

    def with_context(self, context: SerializationContext) -> Self:
        deflate = ours(context)
        return self if deflate == self.deflate else type(self)(deflate=deflate)

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self._deflated(payload) for payload in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self._inflated(payload) for payload in payloads]

    def _deflated(self, payload: Payload) -> Payload:
        if not self.deflate or len(payload.data) < self.SMALLEST:
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
"""The codec every process shares, without a context (`CODEC.decode` reads payloads from a
history); temporalio asks it `with_context` for each payload it encodes."""


@functools.cache
def _adapter(type_hint: Any) -> TypeAdapter[Any]:
    """One adapter per type hint for the process. Unbounded: the hints come from the workflow
    and activity signatures a worker registers, a set the code fixes, not the traffic."""
    return TypeAdapter(type_hint)


class _CachedJSON(PydanticJSONPlainPayloadConverter):
    def to_payload(self, value: Any) -> Payload | None:
        if _sparse(value):
            return _SPARSE.to_payload(value)
        return super().to_payload(value)

    def from_payload(self, payload: Payload, type_hint: type | None = None) -> Any:
        hint = Any if type_hint is None else type_hint
        try:
            adapter = _adapter(hint)
        except TypeError:  # an unhashable hint: valid, but no cache key
            adapter = TypeAdapter(hint)
        return adapter.validate_json(payload.data)


_SPARSE: Final = PydanticJSONPlainPayloadConverter(ToJsonOptions(exclude_unset=True))
"""JSON of the fields a value's models had set, as Temporal's `OpenAIPayloadConverter` writes
the OpenAI Agents SDK's values (a model response, the activity's result): OpenAI's models
take some fields by alias only (`async_` as `async`), so a field written by its name would
come back as an extra key, which the SDK's run state refuses when it copies a paused call."""


def _sparse(value: Any) -> bool:
    """A value of the OpenAI Agents SDK or OpenAI's client, or of Google's ADK or GenAI SDK
    (which Temporal's `GoogleAdkPlugin` writes sparse too); by module: none is a dependency
    of the core install."""
    return type(value).__module__.partition(".")[0] in ("agents", "openai", "google")


class PayloadConverter(PydanticPayloadConverter):
    """temporalio's pydantic JSON, whose `TypeAdapter`s are built once per process: each
    workflow instance makes its own payload converter, and the plain one's per-instance
    cache would build them again in every cached workflow (CPU on its first tasks, memory
    while it stays cached). What it writes is byte for byte what the threads' converter
    writes."""

    def __init__(self) -> None:
        json = _CachedJSON()
        CompositePayloadConverter.__init__(
            self,
            *(
                json if isinstance(converter, JSONPlainPayloadConverter) else converter
                for converter in DefaultPayloadConverter.default_encoding_payload_converters
            ),
        )
