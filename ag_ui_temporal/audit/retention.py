"""`AUDIT_RETENTION`: the worker drops audit records older than the setting, once an hour.

Every worker replica does it; a prune is idempotent (what one replica dropped, the next
finds gone), so no leader is needed. Unset, records are kept forever.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

from ag_ui_temporal.store import AuditLog

log = logging.getLogger("ag-ui-temporal")

EVERY = timedelta(hours=1)


async def keep_retention(audit: AuditLog, retention: timedelta, every: timedelta = EVERY) -> None:
    """Until cancelled: drop the records recorded more than `retention` ago, every `every`."""
    while True:
        try:
            dropped = await audit.prune(datetime.now(UTC) - retention)
            if dropped:
                log.info("audit retention: dropped %d records older than %s", dropped, retention)
        except Exception:  # the store is down: the next round tries again
            log.warning("audit retention: the store could not be pruned", exc_info=True)
        await asyncio.sleep(every.total_seconds())
