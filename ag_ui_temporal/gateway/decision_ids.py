"""The run ids the gateway derives for decisions (links, the decision API): the same decision
always gets the same id, on every replica, and nobody else can send a run under it.

A run id the thread (or Temporal, by update id) has seen is answered with that run's result,
whoever sends it again. So a decision's id is an HMAC of the decision under the deployment's
key, which nobody who can only read the thread knows, and it carries the prefix the gateway
refuses in a client's `runId` (`contract.server_run_id`).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from typing import Any, Final

from ag_ui_temporal.store import ServerSecrets
from ag_ui_temporal.workflows.contract import DECISION_RUN_PREFIX
from ag_ui_temporal.workflows.contract.resume import answer_digest

RUN_ID_KEY: Final = "decision-run-ids"
"""The key's name in the store's `server_secrets`: a random key made by the first gateway
that needed it, so every replica (which all share the store) derives the same ids, and no
setting has to provide it."""


class RunIdKey:
    """The deployment's key for decision run ids, read from the store once per process (it
    never changes; while the store does not answer, each decision asks again)."""

    def __init__(self, secrets: ServerSecrets) -> None:
        self.secrets = secrets
        self._key: bytes | None = None
        self._reading = asyncio.Lock()

    async def get(self) -> bytes:
        """The key (raises the store's error when it did not answer)."""
        async with self._reading:  # held only for the first read
            if self._key is None:
                self._key = await self.secrets.key(RUN_ID_KEY)
            return self._key


def decision_run_id(
    key: bytes, principal: str, thread_id: str, interrupt_id: str, status: str, payload: Any
) -> str:
    """The run id of `principal`'s decision (status and canonical payload) on one interrupt."""
    decision = json.dumps([principal, thread_id, interrupt_id, answer_digest(status, payload)])
    digest = hmac.new(key, decision.encode(), hashlib.sha256).hexdigest()
    return f"{DECISION_RUN_PREFIX}{digest[:32]}"
