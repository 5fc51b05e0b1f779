"""The demo's `confirmation`: a yes/no before a step that cannot be undone. The answer is
a boolean payload; "no" is `false`, not a cancel."""

from __future__ import annotations

import httpx

from tests.agui import cancel, error, finished, interrupts, resolve, run, texts
from tests.effects import EffectLog

ASK = "Delete my drafts"


def deleted(outbox: EffectLog, call_id: str) -> int:
    return sum(1 for e in outbox.effects("deleteDrafts") if e["key"] == call_id)


async def test_yes_runs_the_step_once(http: httpx.AsyncClient, thread_id: str, outbox: EffectLog):
    [asked] = interrupts(await run(http, thread_id, text=ASK))
    assert (asked["reason"], asked["responseSchema"]) == ("confirmation", {"type": "boolean"})
    assert asked["message"] == "Delete all your email drafts? This cannot be undone."
    binding = asked["metadata"]["tanstack:interruptBinding"]
    assert binding["kind"] == "generic"  # a yes or no, not a tool approval with edits
    done = await run(http, thread_id, resume=[resolve(asked, True)])
    assert texts(done) == "Deleted your drafts."
    assert deleted(outbox, asked["toolCallId"]) == 1


async def test_no_is_a_false_payload(http: httpx.AsyncClient, thread_id: str, outbox: EffectLog):
    [asked] = interrupts(await run(http, thread_id, text=ASK))
    not_a_boolean = error(await run(http, thread_id, resume=[resolve(asked, "no")]))
    assert not_a_boolean["code"] == "INVALID_PAYLOAD"
    done = await run(http, thread_id, resume=[resolve(asked, False)])
    assert texts(done) == "I did not carry out deleting your drafts: you said no."
    assert finished(done)["outcome"] == {"type": "success"}
    assert deleted(outbox, asked["toolCallId"]) == 0


async def test_a_cancel_is_not_a_no(http: httpx.AsyncClient, thread_id: str, outbox: EffectLog):
    [asked] = interrupts(await run(http, thread_id, text=ASK))
    done = await run(http, thread_id, resume=[cancel(asked)])
    assert texts(done) == "I did not carry out deleting your drafts: it was cancelled."
    assert deleted(outbox, asked["toolCallId"]) == 0
