"""Payload compression (`temporal_client.Compression`): large payloads are stored deflated,
small ones and those from before as they are, and a crafted one cannot inflate without
bound."""

from __future__ import annotations

import json
import os
import zlib

import httpx
import pytest
from temporalio.api.common.v1 import Payload
from temporalio.client import Client

from temporal_client import DATA_CONVERTER, ZLIB, Compression
from tests.agui import interrupts, resolve, run, texts
from workflows.contract import thread_workflow_id

EMAIL = "Send an email to ada@example.com saying hi"


def json_payload(value: object) -> Payload:
    return Payload(metadata={"encoding": b"json/plain"}, data=json.dumps(value).encode())


async def test_large_payloads_are_deflated_and_come_back_the_same():
    codec = Compression()
    large = json_payload({"messages": [{"role": "user", "content": "hello " * 40}] * 20})
    small = json_payload({"approved": True})
    encoded = await codec.encode([large, small])
    assert encoded[0].metadata["encoding"] == ZLIB
    assert encoded[0].ByteSize() < large.ByteSize() / 3
    assert encoded[1] == small  # not worth it
    assert await codec.decode(encoded) == [large, small]
    assert await codec.decode([large]) == [large]  # written before compression: as it is


async def test_incompressible_payloads_stay_as_they_are():
    noise = Payload(metadata={"encoding": b"binary/plain"}, data=os.urandom(4096))
    assert await Compression().encode([noise]) == [noise]  # nothing to gain


async def test_a_payload_that_inflates_past_the_bound_is_refused():
    bomb = Payload(
        metadata={"encoding": ZLIB}, data=zlib.compress(b"\0" * (Compression.LARGEST + 1))
    )
    with pytest.raises(ValueError, match="inflates past"):
        await Compression().decode([bomb])


async def test_a_thread_stores_its_large_payloads_deflated(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    assert client.data_converter.payload_codec is DATA_CONVERTER.payload_codec
    [asked] = interrupts(await run(http, thread_id, text=EMAIL))
    done = await run(http, thread_id, resume=[resolve(asked, {"approved": True})])
    assert "Sent the email to ada@example.com" in texts(done)
    history = await client.get_workflow_handle(thread_workflow_id(thread_id)).fetch_history()
    scheduled = [
        e.activity_task_scheduled_event_attributes.input.payloads[0]
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]
    assert any(p.metadata["encoding"] == ZLIB for p in scheduled)  # the model requests
