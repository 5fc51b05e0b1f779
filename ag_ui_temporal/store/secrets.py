"""The deployment's random keys (`server_secrets`): made once, by whichever process first
needs one, and the same for every process that shares the store.

A key here is what no configuration has to provide: every gateway replica already shares
the store (a decision link is used once across them through it), so a key kept here is
deployment-wide by construction. It never leaves the store and the processes' memory.
"""

from __future__ import annotations

import secrets

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from ag_ui_temporal.store._insert import insert_if_absent
from ag_ui_temporal.store.tables import server_secrets

KEY_BYTES = 32
"""Random bytes of a new key (HMAC-SHA256's block of security)."""


class ServerSecrets:
    """The `server_secrets` table: one random key per name."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def key(self, name: str) -> bytes:
        """The key called `name`, made now if there is none yet. Two processes making it at
        once both get the one that was stored first."""
        row = {"name": name, "secret": secrets.token_hex(KEY_BYTES)}
        async with self.engine.begin() as db:
            await db.execute(insert_if_absent(self.engine, server_secrets), row)
            stored = await db.scalar(
                sa.select(server_secrets.c.secret).where(server_secrets.c.name == name)
            )
        return bytes.fromhex(str(stored))
