"""The fault harness: concurrent flows while the Temporal dev server, the thread workers and
the gateway (real processes) are SIGKILLed at seeded random moments and restarted.

The store is PostgreSQL (a throwaway cluster, migrations applied first) shared by two thread
workers on one task queue; the examples' worker owns the producer's orders, and a team's
worker on a plain client (no codec) owns `PlainOrderWorkflow`. The stack tells people by
email and by a signed webhook, both received in the harness's own process, which is never
killed (tests/faults/notices.py). The flows mix email approvals (approved, approved with
edits, rejected), expense approval chains answered by their approvers (bob through the
decision API, carol by the decision link in her email, dave by the one in the webhook),
producer offers answered in chat (the plain client's with a large answer), and a form left
to expire (tests/faults/scripts.py). Afterwards every flow must have completed with its own
result, every effect must be in the outbox exactly once per key (and only for what was
approved), every chain must have the decisions its approvers gave, every order the speed
chosen (the plain producer the whole answer), every thread exactly its client's runs and no
interrupt left open, every flow held at its interrupt across a kill must have resolved it,
every interrupt's life (and every chain's trail) must be in the store's audit trail exactly
once per record and the trail must verify, every notice the offers and outcomes call for
must have arrived on both channels (again only as the same notice under the same id), every
link that said "Thank you" must be a decision the chain recorded by link and none that was
refused may have decided anything, and no process may log a stack trace.
The small size runs in `make test` (tests/faults/test_faults.py); the full size:

    python -m tests.faults.harness --flows 100 --kills 12 --seed 7      # `make faults`

`--sqlite --workers 1` runs the earlier layout: SQLite and one worker.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import signal
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Coroutine
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.effects import EffectLog
from tests.faults.approvers import Inboxes
from tests.faults.chaos import Chaos, kill_plan
from tests.faults.checks import (
    activity_retries,
    check_audit,
    check_chains,
    check_links,
    check_logs,
    check_notices,
    check_outbox,
    check_outcomes,
    check_threads,
    connect,
)
from tests.faults.flows import EMAIL_KINDS, TIMEOUT, Flow, Stats
from tests.faults.notices import notice_servers, write_directory
from tests.faults.processes import Layout, Stack, running_stack
from tests.faults.scripts import World, play
from tests.postgres import throwaway_cluster

ARRIVALS = 2.0
"""Flows arrive spread over this many seconds per kill: the kills land among them."""


@dataclass
class Config:
    flows: int = 12
    kills: int = 3
    seed: int = 1
    liveness: float = 600
    """Seconds after which flows still running are reported as hung: a bound on waiting for
    a condition that must eventually hold, not a timed assertion."""
    hold_every: int = 4
    """Every n-th flow is held at its interrupt for a kill (and at least one per kill)."""
    workers: int = 2
    postgres: bool = True
    """The store on a throwaway PostgreSQL cluster (else SQLite in the state directory)."""


@dataclass
class Report:
    config: Config
    completed: int = 0
    flows: dict[str, int] = field(default_factory=dict)
    """How many flows of each kind."""
    kills: dict[str, int] = field(default_factory=dict)
    unexpected_exits: dict[str, list[int]] = field(default_factory=dict)
    """Processes that died without being killed (and were started again)."""
    resends: int = 0
    resend_causes: dict[str, int] = field(default_factory=dict)
    longest_run: str = ""
    """The longest time a client needed to get a run's terminal event, re-sends included."""
    activity_retries: int = 0
    """Tool activities a killed worker left running, retried after their start-to-close
    timeout (workflows/contract TOOL_TIMEOUT): each one delays its flow by that much."""
    held_across_kill: dict[str, int] = field(default_factory=dict)
    """Flows whose interrupt was open across a kill of that process, then resolved."""
    effects: int = 0
    audit_records: int = 0
    """Records in the store's audit trail, all verified (`check_audit`)."""
    inbox_runs: int = 0
    """Runs the approvers started in their inboxes (deliveries and answers)."""
    notices: dict[str, int] = field(default_factory=dict)
    """Distinct notices each channel delivered (email, webhook), all of them expected."""
    notice_repeats: int = 0
    """Deliveries again under an id already delivered (a retry), each saying the same."""
    links: dict[str, int] = field(default_factory=dict)
    """The approvers' decision links: clicks, links thanked ("Thank you") and refused,
    items answered through the API after their link was refused, decisions recorded as come
    by link."""
    wall_seconds: float = 0.0
    problems: list[str] = field(default_factory=list)
    logs: dict[str, str] = field(default_factory=dict)
    """The end of each process's log, when there are problems."""

    def summary(self) -> str:
        return json.dumps(asdict(self), indent=2)


MIX = (
    "email", "chain-approve", "order", "expiry", "edit", "chain-reject", "email", "reject",
    "plain-order", "email", "chain-approve", "email", "chain-reject", "email", "edit", "order",
    "email", "reject", "email", "email",
)  # fmt: skip
"""Every 20 flows: 8 emails, 2 edited, 2 rejected, 2 approved and 2 rejected expense chains,
2 orders, 1 order of the producer on a plain client, 1 expiry; the first 12 (`make test`)
have every kind."""


def make_flows(config: Config, rng: random.Random) -> list[Flow]:
    token = uuid.uuid4().hex[:6]
    flows = [
        Flow(
            index=i,
            thread_id=f"fault-{token}-{i:03d}",
            kind=kind,
            start_delay=rng.uniform(0, ARRIVALS * config.kills),
            think=rng.uniform(0, 0.5),
        )
        for i, kind in enumerate(MIX[j % len(MIX)] for j in range(config.flows))
    ]
    holdable = [f for f in flows if f.kind in EMAIL_KINDS]
    if config.kills and holdable:
        held = min(len(holdable), max(config.kills, config.flows // config.hold_every))
        for j, flow in enumerate(rng.sample(holdable, held)):
            flow.hold_for_kill = j % config.kills + 1
    return flows


async def run_harness(config: Config, workdir: Path) -> Report:
    """Start the stack (on a throwaway PostgreSQL cluster, if asked), run, check, report."""
    if not config.postgres:
        return await _run(config, workdir, None)
    with throwaway_cluster() as cluster:
        return await _run(config, workdir, await asyncio.to_thread(cluster.database))


async def _run(config: Config, workdir: Path, store_url: str | None) -> Report:
    rng = random.Random(config.seed)
    flows = make_flows(config, rng)
    report, stats = Report(config, flows=dict(Counter(f.kind for f in flows))), Stats()
    started = time.monotonic()
    tag = uuid.uuid4().hex[:8]
    layout = Layout(f"faults-{tag}", f"faults-examples-{tag}", store_url, config.workers)
    directory = workdir / "people.yaml"
    people = write_directory(directory, {f.principal for f in flows if f.principal})
    async with (
        notice_servers() as notices,
        running_stack(workdir, layout, notices.env(directory)) as stack,
    ):
        chaos = Chaos(
            stack,
            kill_plan(config.kills, rng, stack.killable),
            [rng.uniform(0.1, 1.0) for _ in range(config.kills)],
            held=Counter(f.hold_for_kill for f in flows if f.hold_for_kill is not None),
        )
        client = await connect(stack.temporal_address)
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=32)
        async with httpx.AsyncClient(
            base_url=stack.gateway_url, timeout=TIMEOUT, limits=limits
        ) as http:
            inboxes = Inboxes(http, client, stats, notices)
            world = World(http, chaos, stats, client, inboxes, layout.task_queue,
                          layout.examples_queue, layout.plain_queue)  # fmt: skip
            stop = asyncio.Event()
            approvers = asyncio.create_task(inboxes.serve(stop))
            work = [chaos.run(), *(play(flow, world) for flow in flows)]
            report.problems += await _until_done(work, config.liveness, flows)
            stop.set()
            await approvers
            report.problems += inboxes.errors
            report.inbox_runs = inboxes.runs
        if not report.problems:  # the processes are all up again: look at what they did
            report.effects, problems = check_outbox(EffectLog(stack.store_url), flows)
            report.problems += problems + check_outcomes(flows)
            report.problems += await check_chains(client, flows)
            report.problems += await check_threads(client, flows)
            report.activity_retries = await activity_retries(client, flows)
            report.audit_records, problems, trails = await check_audit(stack.store_url, flows)
            report.problems += problems
            told, problems = await check_notices(notices, people, flows, trails)
            report.notices, report.notice_repeats = told.delivered, told.repeats
            report.problems += problems
            links, problems = check_links(list(inboxes.uses.values()), trails)
            report.links = asdict(links)
            report.problems += problems
        logs = {name: s.log_path for name, s in stack.services.items() if name in stack.killable}
        report.problems += check_logs({n: p for n, p in logs.items() if n != "temporal"})
        _fill(report, flows, chaos, stack, stats)
    report.wall_seconds = round(time.monotonic() - started, 1)
    return report


async def _until_done(
    work: list[Coroutine[Any, Any, None]], liveness: float, flows: list[Flow]
) -> list[str]:
    """Run everything to its end, or report what is still running after `liveness` seconds."""
    tasks = [asyncio.ensure_future(w) for w in work]
    done, pending = await asyncio.wait(tasks, timeout=liveness)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    problems = [f"{type(e).__name__}: {e}" for t in done if (e := t.exception()) is not None]
    if pending:
        stuck = [f"{f.thread_id} ({f.phase})" for f in flows if f.phase != "done" and not f.error]
        problems.append(f"not done after {liveness:.0f} s: chaos={tasks[0] in pending} {stuck}")
    return problems + [f"{f.thread_id} ({f.phase}): {f.error}" for f in flows if f.error]


def _fill(report: Report, flows: list[Flow], chaos: Chaos, stack: Stack, stats: Stats) -> None:
    report.completed = sum(f.phase == "done" for f in flows)
    report.kills = dict(chaos.kills)
    report.unexpected_exits = stack.unexpected_exits()
    report.resends, report.resend_causes = stats.resends, dict(stats.causes)
    report.longest_run = f"{stats.slowest}: {stats.longest:.1f} s"
    report.held_across_kill = dict(Counter(f.held_across for f in flows if f.held_across))
    if report.problems:
        report.logs = {name: service.tail() for name, service in stack.services.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.faults.harness", description=__doc__)
    parser.add_argument("--flows", type=int, default=100)
    parser.add_argument("--kills", type=int, default=12)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--liveness", type=float, default=900)
    parser.add_argument("--workdir", type=Path, help="keep the logs and SQLite files here")
    parser.add_argument("--workers", type=int, default=2, help="thread worker processes")
    parser.add_argument("--sqlite", action="store_true", help="the store on SQLite, not PostgreSQL")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    config = Config(
        flows=args.flows, kills=args.kills, seed=args.seed, liveness=args.liveness,
        workers=args.workers, postgres=not args.sqlite,
    )  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="faults-") as scratch:
        workdir = args.workdir or Path(scratch)
        report = asyncio.run(_stoppable(run_harness(config, workdir)))
    if report is None:
        return 128 + signal.SIGTERM
    print(report.summary())
    return 1 if report.problems else 0


async def _stoppable(harness: Coroutine[Any, Any, Report]) -> Report | None:
    """The harness, cancelled on SIGTERM (None): the processes and the PostgreSQL cluster
    are stopped on the way out, as on any failure."""
    task = asyncio.ensure_future(harness)
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        return await task
    except asyncio.CancelledError:
        return None


if __name__ == "__main__":
    sys.exit(main())
