"""The fault harness: concurrent approval flows while the Temporal dev server, the worker and
the gateway (three real processes) are SIGKILLed at seeded random moments and restarted.

Afterwards every flow must have completed with its own result, the outbox must hold exactly
one `sendEmail` effect per flow (and per tool call id), every thread must have exactly its two
runs and no interrupt left open, and every flow held at its interrupt across a kill must have
resolved it. The small size runs in `make test` (tests/faults/test_faults.py); the full size:

    python -m tests.faults.harness --flows 100 --kills 12 --seed 7      # `make faults`
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
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
from tests.faults.chaos import Chaos, kill_plan
from tests.faults.checks import (
    activity_retries,
    check_logs,
    check_outbox,
    check_threads,
    connect,
)
from tests.faults.flows import (
    TIMEOUT,
    Flow,
    FlowError,
    Stats,
    check_sent,
    post_run,
    tool_call_interrupt,
)
from tests.faults.processes import Stack, running_stack

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


@dataclass
class Report:
    config: Config
    completed: int = 0
    kills: dict[str, int] = field(default_factory=dict)
    unexpected_exits: dict[str, list[int]] = field(default_factory=dict)
    """Processes that died without being killed (and were started again)."""
    resends: int = 0
    resend_causes: dict[str, int] = field(default_factory=dict)
    longest_run: str = ""
    """The longest time a client needed to get a run's terminal event, re-sends included."""
    activity_retries: int = 0
    """Tool activities a killed worker left running, retried after their start-to-close
    timeout (workflows/_turn.py TOOL_TIMEOUT): each one delays its flow by that much."""
    held_across_kill: dict[str, int] = field(default_factory=dict)
    """Flows whose interrupt was open across a kill of that process, then resolved."""
    effects: int = 0
    wall_seconds: float = 0.0
    problems: list[str] = field(default_factory=list)
    logs: dict[str, str] = field(default_factory=dict)
    """The end of each process's log, when there are problems."""

    def summary(self) -> str:
        return json.dumps(asdict(self), indent=2)


def make_flows(config: Config, rng: random.Random) -> list[Flow]:
    token = uuid.uuid4().hex[:6]
    flows = [
        Flow(
            index=i,
            thread_id=f"fault-{token}-{i:03d}",
            start_delay=rng.uniform(0, ARRIVALS * config.kills),
            think=rng.uniform(0, 0.5),
        )
        for i in range(config.flows)
    ]
    if config.kills:
        held = min(len(flows), max(config.kills, config.flows // config.hold_every))
        for j, flow in enumerate(rng.sample(flows, held)):
            flow.hold_for_kill = j % config.kills + 1
    return flows


async def drive(flow: Flow, http: httpx.AsyncClient, chaos: Chaos, stats: Stats) -> None:
    """Run the flow to its end; a failure is recorded on the flow, not raised."""
    try:
        await asyncio.sleep(flow.start_delay)  # staggered arrivals
        flow.phase = "ask"
        interrupt = tool_call_interrupt(await post_run(http, flow.ask_body(), stats))
        flow.tool_call_id = interrupt["toolCallId"]
        if flow.hold_for_kill is not None:
            flow.phase = f"held for kill {flow.hold_for_kill}"
            await chaos.pause(flow.hold_for_kill)
            flow.held_across = await chaos.wait_for_kill(flow.hold_for_kill)
        else:
            await asyncio.sleep(flow.think)
        flow.phase = "approve"
        events = await post_run(http, flow.approve_body(interrupt["id"]), stats)
        flow.result_text = check_sent(flow, events)
        flow.phase = "done"
    except FlowError as err:
        flow.error = str(err)
        if flow.hold_for_kill is not None and flow.phase == "ask":
            await chaos.pause(flow.hold_for_kill)  # a failed flow must not block the chaos


async def run_harness(config: Config, workdir: Path) -> Report:
    rng = random.Random(config.seed)
    flows = make_flows(config, rng)
    report, stats = Report(config), Stats()
    started = time.monotonic()
    async with running_stack(workdir, f"faults-{uuid.uuid4().hex[:8]}") as stack:
        chaos = Chaos(
            stack,
            kill_plan(config.kills, rng),
            [rng.uniform(0.1, 1.0) for _ in range(config.kills)],
            held=Counter(f.hold_for_kill for f in flows if f.hold_for_kill is not None),
        )
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=32)
        async with httpx.AsyncClient(
            base_url=stack.gateway_url, timeout=TIMEOUT, limits=limits
        ) as http:
            work = [chaos.run(), *(drive(flow, http, chaos, stats) for flow in flows)]
            report.problems += await _until_done(work, config.liveness, flows)
        if not report.problems:  # the processes are all up again: look at what they did
            report.effects, problems = check_outbox(EffectLog(stack.store_url), flows)
            client = await connect(stack.temporal_address)
            report.problems += problems + await check_threads(client, flows)
            report.activity_retries = await activity_retries(client, flows)
        logs = {name: stack.services[name].log_path for name in ("worker", "gateway")}
        report.problems += check_logs(logs)
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
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    config = Config(flows=args.flows, kills=args.kills, seed=args.seed, liveness=args.liveness)
    with tempfile.TemporaryDirectory(prefix="faults-") as scratch:
        workdir = args.workdir or Path(scratch)
        report = asyncio.run(run_harness(config, workdir))
    print(report.summary())
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
