"""A LangGraph graph's checkpoint, carried in the thread's state between runs.

Temporal is the durability, so the graph runs on LangGraph's `InMemorySaver` (as
`temporalio-langgraph` advises); what the saver holds after a run is kept in
`ThreadState.agent_data`, so it crosses continue-as-new with the rest of the thread and a
replay rebuilds it as the run did. Only the newest checkpoint of each namespace is kept (with
its pending writes: the interrupts that wait, the writes of tasks that finished beside them),
never the graph's history, and the whole is bounded (`CHECKPOINT_BYTES`): the oldest messages
of its `messages` channel (an `@entrypoint`'s: what it saved, its `previous`, when that is a
list of messages) give way first, from a user message on, as the thread's own window does.
"""

from __future__ import annotations

import base64
from typing import Any, Final

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from langchain_core.messages import BaseMessage, HumanMessage
    from langgraph._internal._constants import PREVIOUS
    from langgraph.checkpoint.memory import InMemorySaver

    from ag_ui_temporal.workflows.contract import THREAD_WINDOW_BYTES, WireDict, json_size

CHECKPOINT_BYTES: Final = THREAD_WINDOW_BYTES
"""The most a graph's carried checkpoint may take (its JSON, bytes base64-encoded): the
thread's state must stay within Temporal's payload limits however long the conversation."""
MESSAGES: Final = "messages"
CONVERSATIONS: Final = (MESSAGES, PREVIOUS)
"""The channels that hold the conversation: a `StateGraph`'s, an `@entrypoint`'s."""


class CheckpointTooLarge(Exception):
    """Over `CHECKPOINT_BYTES` even with its messages trimmed (the graph's other state)."""


def restored(carried: WireDict, thread_id: str) -> InMemorySaver:
    """A saver holding what `carry` kept (empty for a thread that has none yet)."""
    saver = InMemorySaver()
    for space in carried.get("namespaces") or []:
        ns, checkpoint_id = space["ns"], space["id"]
        saver.storage[thread_id][ns][checkpoint_id] = (
            _typed(space["checkpoint"]),
            _typed(space["metadata"]),
            None,
        )
        saver.writes[(thread_id, ns, checkpoint_id)] = {
            (task_id, index): (task_id, channel, _typed(value), path)
            for task_id, index, channel, value, path in space["writes"]
        }
        for channel, version, value in space["blobs"]:
            saver.blobs[(thread_id, ns, channel, version)] = _typed(value)
    return saver


def newest(carried: WireDict) -> str | None:
    """The id of the newest checkpoint carried (new ones must sort after it)."""
    return max((space["id"] for space in carried.get("namespaces") or []), default=None)


def carry(saver: InMemorySaver, thread_id: str, budget: int = CHECKPOINT_BYTES) -> WireDict:
    """The newest checkpoint of each namespace, its pending writes and channel values, within
    `budget` (raises `CheckpointTooLarge`)."""
    namespaces = [
        _namespace(saver, thread_id, ns, checkpoints)
        for ns, checkpoints in saver.storage.get(thread_id, {}).items()
        if checkpoints
    ]
    carried: WireDict = {"namespaces": namespaces}
    root = next((space for space in namespaces if space["ns"] == ""), None)
    while json_size(carried) > budget:
        if root is None or not _trim(saver, root):
            raise CheckpointTooLarge(f"the graph's state is over {budget} bytes")
    return carried


def _namespace(
    saver: InMemorySaver, thread_id: str, ns: str, checkpoints: dict[str, Any]
) -> WireDict:
    checkpoint_id = max(checkpoints)  # ids are uuid6: they sort by time
    checkpoint, metadata, _parent = checkpoints[checkpoint_id]
    versions = saver.serde.loads_typed(checkpoint).get("channel_versions", {})
    writes = saver.writes.get((thread_id, ns, checkpoint_id), {})
    return {
        "ns": ns,
        "id": checkpoint_id,
        "checkpoint": _wire(checkpoint),
        "metadata": _wire(metadata),
        "writes": [
            [task_id, index, channel, _wire(value), path]
            for (task_id, index), (_task, channel, value, path) in writes.items()
        ],
        "blobs": [
            [channel, version, _wire(value)]
            for (thread, space, channel, version), value in saver.blobs.items()
            if thread == thread_id and space == ns and versions.get(channel) == version
        ],
    }


def _trim(saver: InMemorySaver, root: WireDict) -> bool:
    """Drop the oldest turn of the root's conversation: up to its second user message
    (a turn starts at one, so no tool result is left without its call), or, in a single turn,
    all but its last message; False when nothing is left to drop."""
    for blob in root["blobs"]:
        if blob[0] not in CONVERSATIONS:
            continue
        messages = saver.serde.loads_typed(_typed(blob[2]))
        if not isinstance(messages, list) or len(messages) < 2:
            return False
        if not all(isinstance(m, BaseMessage) for m in messages):
            return False  # an entrypoint's own `previous`: not ours to cut
        starts = [i for i, m in enumerate(messages) if i > 0 and isinstance(m, HumanMessage)]
        keep = messages[starts[0] :] if starts else messages[-1:]
        blob[2] = _wire(saver.serde.dumps_typed(keep))
        return True
    return False


def _wire(typed: tuple[str, bytes]) -> list[str]:
    kind, data = typed
    return [kind, base64.b64encode(data).decode("ascii")]


def _typed(wire: list[str]) -> tuple[str, bytes]:
    return wire[0], base64.b64decode(wire[1])
