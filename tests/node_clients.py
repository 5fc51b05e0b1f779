"""Run the real JS clients (tests/node/*.mjs) from pytest: one JSON job in, one JSON result out."""

from __future__ import annotations

import asyncio
import json
import shutil
from asyncio.subprocess import PIPE
from pathlib import Path
from typing import Any

import pytest

NODE_DIR = Path(__file__).parent / "node"


NODE_MISSING = "node or tests/node/node_modules missing (make test installs them)"


def node_available() -> bool:
    return shutil.which("node") is not None and (NODE_DIR / "node_modules" / "@tanstack").exists()


requires_node = pytest.mark.skipif(not node_available(), reason=NODE_MISSING)


async def run_node(script: str, job: dict[str, Any], seconds: float = 120) -> dict[str, Any]:
    """Run `tests/node/<script>` on `job`; fail with its stderr if the harness itself fails.

    Asynchronous, so the gateway under test (served on this event loop) keeps serving.
    """
    process = await asyncio.create_subprocess_exec(
        "node", script, cwd=NODE_DIR, stdin=PIPE, stdout=PIPE, stderr=PIPE
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(json.dumps(job).encode()), seconds)
    assert process.returncode == 0, f"{script} exited {process.returncode}: {stderr[-3000:]!r}"
    return json.loads(stdout)


def streams_of(snapshots: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Every SSE response the JS client received, as event lists (for the zod validation)."""
    return [
        request["events"]
        for snapshot in snapshots
        for request in snapshot.get("requests", [])
        if request.get("events")
    ]


async def validate_streams(streams: list[list[dict[str, Any]]]) -> None:
    """Every stream against `@ag-ui/core`'s zod schemas and the client's order rules.

    Without Node this fails, never skips: a suite that validated nothing must not pass."""
    if not streams:
        return
    if not node_available():
        pytest.fail(f"{len(streams)} AG-UI event streams left unvalidated: {NODE_MISSING}")
    report = await run_node("validate_events.mjs", {"streams": streams}, seconds=300)
    problems = report["problems"][:20]
    assert report["ok"], f"{len(report['problems'])} problems in {len(streams)} streams: {problems}"
