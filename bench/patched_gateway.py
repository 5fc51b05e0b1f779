"""The gateway with the fixes bench still proposes, applied at run time (no file of the
gateway is edited): `python -m bench.patched_gateway` in place of `ag-ui-temporal gateway`,
for before/after numbers in one bench run (`--patched`).

Applied to the product since they were measured here: the follower spin once the
caller's run update had its result (`gateway/feeds.py`), the thread-pool hops of sync
dependencies (now `async def`), and the reader's second long poll (it now ends on the
starting POST's own wait for the result).

- poll: a run still going after QUICK_RUN (0.1 s) starts a reader that queries the
  workflow after 50, 100, 200 ms... (a query task on the worker, a round trip through
  the server each). Tried here: QUICK_RUN 0.25 s and FIRST_POLL 0.1 s (environment
  BENCH_QUICK_RUN / BENCH_FIRST_POLL).
"""

from __future__ import annotations

import os

import uvicorn

from gateway import feeds, runs
from gateway.main import create_app
from settings import get_settings


def main() -> None:
    settings = get_settings()
    runs.QUICK_RUN = float(os.environ.get("BENCH_QUICK_RUN", "0.25"))
    feeds.FIRST_POLL = float(os.environ.get("BENCH_FIRST_POLL", "0.1"))
    app = create_app(settings)
    uvicorn.run(app, host=settings.gateway_host, port=settings.gateway_port, log_level="info")


if __name__ == "__main__":
    main()
