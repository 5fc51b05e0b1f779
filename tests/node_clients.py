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


def node_available() -> bool:
    return shutil.which("node") is not None and (NODE_DIR / "node_modules" / "@tanstack").exists()


requires_node = pytest.mark.skipif(
    not node_available(), reason="node or tests/node/node_modules missing (make test installs them)"
)


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
