"""The fault harness at its small size: 12 flows of every kind (email approvals with edits and
rejections, expense chains, producer orders, one of them a producer on a plain client answered
with a large payload, an expiry) on PostgreSQL with two workers, while the server, each worker
and the gateway are SIGKILLed once; afterwards each leaves its records in the audit trail once,
every notice arrived by email and by webhook, and the expense chains' finance seats were
decided by the links those notices carried.

The full size (100 flows, 12 kills) is `make faults`.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.faults.harness import Config, run_harness

SEED = int(os.environ.get("FAULTS_SEED", "8"))
KILLED = {"temporal": 1, "worker-1": 1, "worker-2": 1, "gateway": 1}


async def test_flows_survive_sigkills_of_server_workers_and_gateway_on_postgres(tmp_path: Path):
    # A stuck flow is reported (with its phase) after `liveness` s, not waited on for ever.
    report = await run_harness(Config(flows=12, kills=4, seed=SEED, liveness=180), tmp_path)
    print(report.summary())  # shown by pytest on failure (and with -s)

    assert report.problems == [], report.summary()
    assert report.kills == KILLED
    assert report.completed == 12
    assert set(report.flows) == {
        "email", "edit", "reject", "chain-approve", "chain-reject", "order", "plain-order",
        "expiry",
    }  # fmt: skip
    # One email per approving email flow (4 approved, 1 edited), each under its own tool call.
    assert report.effects == 5
    # Each kill had an open interrupt paused across it, resolved afterwards.
    assert report.held_across_kill == KILLED
    # Every flow's records reached the audit trail once (`check_audit` found none missing or
    # doubled: `problems` is empty), and the trail verified.
    assert report.audit_records > 0
    # Each of the 12 seats of the 3 chains (bob, then carol, dave and erin) told it waits, the 3
    # requesters told the outcome, the plain producer's owner told its question waits: every
    # one by email and by webhook (`check_notices` found none missing, extra or differing).
    assert report.notices == {"email": 16, "webhook": 16}
    # carol and dave decided by their links (`check_links`: each "Thank you" is a decision the
    # chain recorded by link, and no refused link decided anything).
    assert report.links["decisions"] > 0
