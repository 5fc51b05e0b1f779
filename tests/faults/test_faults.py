"""The fault harness at its small size: 12 approval flows, one SIGKILL of each process.

The full size (100 flows, 12 kills) is `make faults`.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.faults.harness import Config, run_harness

SEED = int(os.environ.get("FAULTS_SEED", "8"))


async def test_approval_flows_survive_sigkills_of_server_worker_and_gateway(tmp_path: Path):
    report = await run_harness(Config(flows=12, kills=3, seed=SEED), tmp_path)
    print(report.summary())  # shown by pytest on failure (and with -s)

    assert report.problems == [], report.summary()
    assert report.kills == {"temporal": 1, "worker": 1, "gateway": 1}
    assert report.completed == 12
    assert report.effects == 12  # one email per flow, each under its own tool call id
    # Each kill had an open interrupt paused across it, resolved afterwards.
    assert report.held_across_kill == {"temporal": 1, "worker": 1, "gateway": 1}
