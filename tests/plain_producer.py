"""A team's own producer: a workflow on a worker whose client is a plain `Client.connect()`.

No codec, temporalio's default data converter (JSON, no pydantic), the default sandbox, and
plain dataclasses for its own input and result: everything it hears from a thread (the
settlement signal, the claim update, the results of the activities it calls on the thread's
queue) must be readable that way. Its question is long (the offer is over a KiB) and takes a
long answer (`notes`, as many strings as the person writes), so both directions carry large
payloads. Used by tests/test_plain_producer.py and the fault harness (`plain-order` flows).
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.client import Client
from temporalio.worker import Worker

from ag_ui_temporal.workflows.producers import ask_in_thread

NOTES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "speed": {"type": "string", "enum": ["standard", "express"]},
        "notes": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["speed", "notes"],
    "additionalProperties": False,
}


@dataclass
class PlainAsk:
    order_id: str
    thread_id: str
    thread_task_queue: str
    thread_owner: str
    """Who may see the thread and answer (the producer's thread is not open to anyone)."""
    items: int = 40
    """Lines of the order in the question (40: an offer of about 2 KiB)."""
    expires_in_seconds: float = 24 * 3600


@dataclass
class PlainOutcome:
    status: str
    speed: str | None = None
    notes_chars: int = 0
    digest: str = ""
    """`digest(payload)` of the answer it received: the test compares it with what it sent."""
    principal: str | None = None
    via: str | None = None
    """Who answered and how, as the producer heard them."""


def digest(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


NOTE_CHARS = 20_000
"""Characters per note: under the gateway's `MAX_STRING_LENGTH`, whatever the answer's size."""


def large_answer(size: int, speed: str = "express") -> dict[str, Any]:
    """An answer with `size` characters of notes that deflate no better than prose (the hex
    of seeded random bytes), in notes of `NOTE_CHARS`."""
    text = random.Random(size).randbytes(size // 2 + 1).hex()[:size]
    notes = [text[i : i + NOTE_CHARS] for i in range(0, size, NOTE_CHARS)]
    return {"speed": speed, "notes": notes}


@workflow.defn(name="PlainOrderWorkflow")
class PlainOrderWorkflow:
    @workflow.run
    async def run(self, ask: PlainAsk) -> PlainOutcome:
        lines = "\n".join(f"- item {i}: a box of {i + 1} parts" for i in range(ask.items))
        outcome = await ask_in_thread(
            ask.thread_id,
            message=f"How should order {ask.order_id} ship? It holds:\n{lines}",
            response_schema=NOTES_SCHEMA,
            expires_in=timedelta(seconds=ask.expires_in_seconds),
            metadata={"orderId": ask.order_id},
            allowed_resolvers=[ask.thread_owner],
            thread_owner=ask.thread_owner,
            thread_task_queue=ask.thread_task_queue,
        )
        if outcome.status != "resolved":
            return PlainOutcome(outcome.status, principal=outcome.principal, via=outcome.via)
        notes = outcome.payload["notes"]
        return PlainOutcome(
            status="resolved",
            speed=outcome.payload["speed"],
            notes_chars=sum(len(note) for note in notes),
            digest=digest(outcome.payload),
            principal=outcome.principal,
            via=outcome.via,
        )


def build_plain_worker(client: Client, task_queue: str) -> Worker:
    """The team's worker: its workflow only, temporalio's defaults for everything else."""
    assert client.data_converter.payload_codec is None, "a plain client has no codec"
    return Worker(client, task_queue=task_queue, workflows=[PlainOrderWorkflow])


async def plain_client(address: str, namespace: str = "default") -> Client:
    """`Client.connect()` as a team writes it: no data converter, no codec, no interceptors."""
    return await Client.connect(address, namespace=namespace)
