"""Names both sides address the thread by: task queue, workflow ids, updates, signals,
queries, activities and search attributes. Renaming one breaks every parked workflow."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel
from temporalio.common import SearchAttributeKey

WireDict = dict[str, Any]
"""An AG-UI object (message, interrupt, event) as its camelCase JSON wire dict."""


def wire(model: BaseModel) -> WireDict:
    """An ag_ui model as the JSON object clients read (camelCase, no null optionals): what
    the workflow stores and the gateway sends, so the two never differ."""
    return model.model_dump(mode="json", by_alias=True)


_LINE_BREAKS = {ord(c): f"\\u{ord(c):04x}" for c in "\u0085\u2028\u2029"}


def json_line(value: Any) -> str:
    """`value` as compact JSON that stays one line for every reader: an SSE `data:` line, an
    NDJSON line. JSON escapes the ASCII controls but leaves U+0085, U+2028 and U+2029 raw,
    and line splitters (Python's `splitlines`, some SSE parsers) end a line at them: a
    hostile title would cut the line in two. Escaped (`\\u2028`), the JSON value is the same."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).translate(_LINE_BREAKS)


TASK_QUEUE = "ag-ui-temporal"
THREAD_WORKFLOW = "ThreadWorkflow"
RUN_UPDATE = "run"
"""Update: start a run (new input or resume) and return its events when it ends."""
CANCEL_RUN_UPDATE = "cancel_run"
"""Update: stop a run still going (`CancelRun` -> `CancelRunResult`)."""
RUN_EVENTS_QUERY = "run_events"
"""Query: one run's events after an offset (progressive streaming, re-attach, join)."""
THREAD_QUERY = "thread"
"""Query: the thread's transcript, interrupts and runs (`ThreadView`: hydration, tests)."""

OFFER_INTERRUPT_SIGNAL = "offer_interrupt"
"""Signal (thread): an external owner workflow offers an interrupt (`OfferInterrupt`)."""
WITHDRAW_INTERRUPT_SIGNAL = "withdraw_interrupt"
"""Signal (thread): the owner takes its interrupt back (`WithdrawInterrupt`)."""
POST_MESSAGE_SIGNAL = "post_message"
"""Signal (thread): a producer posts a message for the client's next run (`PostMessage`)."""
INTERRUPT_SETTLED_SIGNAL = "agui_interrupt_settled"
"""Signal (owner workflow): the thread settled the owner's interrupt (`InterruptSettled`)."""
DROP_RUNS_SIGNAL = "agui_drop_runs"
"""Signal (thread): runs that kept the thread's workflow task failing were dropped (`DropRuns`;
the gateway's stuck-thread watch sends it just before it resets the thread to before them)."""
STREAM_PUBLISH_SIGNAL = "__temporal_workflow_stream_publish"
"""Signal (thread): a model activity's deltas, batched by a `WorkflowStreamClient`
(`temporalio.contrib.workflow_streams.PublishInput`); the library's own signal name."""
SIGNAL_THREAD_ACTIVITY = "agui_signal_thread"
"""Activity (thread task queue): signal-with-start a thread for a producer (`ThreadSignal`)."""
SETTLEMENT_QUERY = "interrupt_settlement"
"""Query (thread): how the thread recorded one interrupt's settlement (`SettlementQuery`)."""
CLAIM_UPDATE = "agui_interrupt_claim"
"""Update (owner workflow): before the thread accepts an answer to an owner's interrupt, may it?
(`InterruptClaim` -> bool; False: the owner closed it, the answer gets `INTERRUPT_WITHDRAWN`)."""
ASK_OWNER_ACTIVITY = "agui_ask_owner"
"""Activity (thread task queue): the thread sends `CLAIM_UPDATE` to an owner (`InterruptClaim`)."""
CONFIRM_SETTLED_ACTIVITY = "agui_confirm_settled"
"""Activity (thread task queue): an owner checks a settlement it heard against the thread's
own record (`SettlementQuery` -> `InterruptSettled | None`): forged signals do not count."""

RUN_IDS = SearchAttributeKey.for_keyword_list("AguiRunIds")
"""The thread's recent run ids, so a join that names only a run finds its thread."""
APPROVALS_PENDING = SearchAttributeKey.for_keyword_list("AguiApprovalPending")
"""Approval chains: the principals whose decision the chain is waiting for now."""
APPROVALS_PARTICIPANTS = SearchAttributeKey.for_keyword_list("AguiApprovalParticipants")
"""Approval chains: every principal a step was ever assigned to (the `done` inbox)."""
SEARCH_ATTRIBUTES = (RUN_IDS, APPROVALS_PENDING, APPROVALS_PARTICIPANTS)
"""Every search attribute the app upserts (the server must have them registered)."""


def thread_workflow_id(thread_id: str) -> str:
    """The one workflow that owns an AG-UI thread."""
    return f"agui-thread:{thread_id}"


RUN_UPDATE_ID_PREFIX = "run:"
_DIGEST_HEX = 64  # `runs.run_digest`: a SHA-256 in hex


def run_update_id(run_id: str, brings: str | None) -> str:
    """Update id for a run: its id and what it brings (`runs.run_digest`). The same POST sent
    again is deduplicated by Temporal (it answers with the run's result); another body under
    the same run id (a continuation, a reused id) reaches the thread, which decides. `brings`
    None: the id gateways sent before the digest, which runs recorded then answer to."""
    head = f"{RUN_UPDATE_ID_PREFIX}{run_id}"
    return head if brings is None else f"{head}:{brings}"


def run_of_update(update_id: str) -> str | None:
    """The run id whose update has id `update_id` (None: no run's update), with or without
    what it brings (`run_update_id`)."""
    if not update_id.startswith(RUN_UPDATE_ID_PREFIX):
        return None
    rest = update_id[len(RUN_UPDATE_ID_PREFIX) :]
    run_id, sep, brings = rest.rpartition(":")
    digest = sep and len(brings) == _DIGEST_HEX and all(c in "0123456789abcdef" for c in brings)
    return run_id if digest else rest


# Temporal's own limits on what the thread's ids become (the dev server's and the server's
# defaults), and the ids' bounds that follow from them.
TEMPORAL_ID_BYTES = 1000
"""Longest workflow id and update id, in UTF-8 bytes (the server's `limit.maxIDLength`)."""
SEARCH_ATTRIBUTE_BYTES = 2048
"""Largest value of one search attribute, in bytes of its JSON (the server's
`limit.searchAttributesSizeOfValue`): all of `AguiRunIds` at once."""
INDEXED_RUNS = 20
"""Run ids `AguiRunIds` holds: the thread's last runs' (`workflows.thread._log.RUNS_KEPT`)."""
MAX_THREAD_ID_BYTES = TEMPORAL_ID_BYTES - len(thread_workflow_id("").encode())
"""Longest thread id, in UTF-8 bytes: its workflow id must be a valid one."""
MAX_RUN_ID_BYTES = SEARCH_ATTRIBUTE_BYTES // INDEXED_RUNS - len('"",')
"""Most bytes a run id takes in `AguiRunIds` (`indexed_size`): the thread's last 20 fit in
one search attribute, or every workflow task that indexes them fails."""


def indexed_size(run_id: str) -> int:
    """Bytes `run_id` takes in `AguiRunIds`: its JSON as the SDK writes a search attribute,
    without the quotes (an ASCII id its length; `é` 6 bytes, an emoji 12)."""
    return len(json.dumps(run_id)) - 2


MAX_KEY_BYTES = 400
"""A longer once-per-key key is hashed: it must fit a workflow id (1,000 bytes), a webhook id
and an indexed primary key on both of the store's engines."""


def fitted_key(*parts: str, sep: str = ":") -> str:
    """A once-per-key key made of `parts`: readable while it is short, its SHA-256 when the
    ids that make it are long (the notices' and the audit trail's keys)."""
    key = sep.join(parts)
    if len(key.encode()) <= MAX_KEY_BYTES:
        return key
    return f"sha256-{hashlib.sha256(key.encode()).hexdigest()}"
