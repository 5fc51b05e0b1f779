"""Run CopilotKit's real clients (tests/copilotkit/*.mjs, their own npm project: CopilotKit
pins `@ag-ui/client` 0.0.59, tests/node pins 1.0.0 for TanStack) from pytest.

A driver reads one JSON job on stdin and writes one JSON result on stdout; the runtime
(`runtime.mjs`) serves until its stdin closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
from asyncio.subprocess import PIPE
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

HERE = Path(__file__).parent
MISSING = "node or tests/copilotkit/node_modules missing (make test installs them)"


def available() -> bool:
    return shutil.which("node") is not None and (HERE / "node_modules" / "@copilotkit").exists()


requires_copilotkit = pytest.mark.skipif(not available(), reason=MISSING)


async def run_script(
    script: str, job: dict[str, Any], seconds: float = 240, args: Sequence[str] = ()
) -> dict[str, Any]:
    """Run `tests/copilotkit/<script>` on `job`; fail with its stderr if the driver fails.
    The result is its JSON output (`{}` for a script that prints none).

    Asynchronous, so the gateway under test (served on this event loop) keeps serving."""
    process = await asyncio.create_subprocess_exec(
        "node", script, *args, cwd=HERE, stdin=PIPE, stdout=PIPE, stderr=PIPE
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(json.dumps(job).encode()), seconds)
    assert process.returncode == 0, f"{script} exited {process.returncode}: {stderr[-3000:]!r}"
    result: dict[str, Any] = json.loads(stdout) if stdout.strip() else {}
    return result


@contextlib.asynccontextmanager
async def copilotkit_runtime(agent_url: str, page: Path | None = None) -> AsyncIterator[str]:
    """CopilotKit's runtime in Node with its agent `assistant` at `agent_url` (and the built
    `page` at `/`); its URL (the client's `runtimeUrl`) until the block ends, when it is
    stopped (its memory with it)."""
    args = [agent_url, *([str(page)] if page else [])]
    process = await asyncio.create_subprocess_exec(
        "node", "runtime.mjs", *args, cwd=HERE, stdin=PIPE, stdout=PIPE, stderr=PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        line = await asyncio.wait_for(process.stdout.readline(), 120)
        if not line:
            _, stderr = await process.communicate()
            raise AssertionError(f"runtime.mjs exited {process.returncode}: {stderr[-3000:]!r}")
        yield json.loads(line)["url"]
    finally:
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 30)
        except TimeoutError:
            process.kill()
            await process.wait()


# -- a scenario's steps, as use_interrupt.mjs and page.mjs take them --


def send(text: str) -> dict[str, Any]:
    return {"send": text}


def answer(*answers: dict[str, Any]) -> dict[str, Any]:
    return {"answer": list(answers)}


def approve(index: int, approved: bool = True) -> dict[str, Any]:
    return {"index": index, "payload": {"approved": approved}}


def cancel(index: int) -> dict[str, Any]:
    return {"index": index, "cancel": True}


RELOAD: dict[str, Any] = {"reload": True}
CONNECT: dict[str, Any] = {"connect": True}
REDELIVER: dict[str, Any] = {"redeliver": True}
AWAIT_EXPIRED: dict[str, Any] = {"awaitExpired": True}


@dataclass
class Step:
    """One step of a page, as the driver saw it."""

    raw: dict[str, Any]

    @property
    def requests(self) -> list[dict[str, Any]]:
        return list(self.raw["requests"])

    def posts(self) -> list[dict[str, Any]]:
        """The runs it sent (POSTs; a runtime's `/info` and the like left out)."""
        return [r for r in self.requests if r["method"] == "POST"]

    def post(self) -> dict[str, Any]:
        [post] = self.posts()
        return post

    @property
    def interrupts(self) -> list[dict[str, Any]]:
        return list(self.raw["interrupts"])

    @property
    def cards(self) -> list[dict[str, Any]]:
        return list(self.raw["cards"])

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.raw["messages"])

    @property
    def errors(self) -> list[dict[str, Any]]:
        return list(self.raw["errors"])

    @property
    def logs(self) -> list[dict[str, Any]]:
        return list(self.raw["logs"])

    def said(self) -> list[str]:
        """Every text the assistant said, as the page holds it."""
        return [
            m["content"] for m in self.messages if m["role"] == "assistant" and m.get("content")
        ]

    def clean(self) -> None:
        """The step itself did not fail, and CopilotKit reported no error."""
        assert self.raw["stepError"] is None, self.raw["stepError"]
        assert self.errors == [], self.errors


def steps(result: dict[str, Any]) -> list[Step]:
    """A scenario's steps; fails on a scenario the driver could not run."""
    assert "error" not in result, result["error"]
    return [Step(raw) for raw in result["snapshots"]]


def run_ids(post: dict[str, Any]) -> tuple[str, list[str]]:
    """A POST's body `runId` and the `runId`s of the runs its stream started."""
    events = post.get("events") or []
    return post["body"]["runId"], [e["runId"] for e in events if e["type"] == "RUN_STARTED"]


def finished(post: dict[str, Any]) -> dict[str, Any]:
    """The `RUN_FINISHED` of a POST's stream (its last event)."""
    events = post.get("events") or []
    assert events and events[-1]["type"] == "RUN_FINISHED", events[-1:]
    last: dict[str, Any] = events[-1]
    return last


def streams(*results: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """Every SSE response the pages received, as event lists."""
    return [
        request["events"]
        for result in results
        for snapshot in result.get("snapshots", [])
        for request in snapshot["requests"]
        if request.get("events")
    ]


async def offered(http: httpx.AsyncClient, thread_id: str) -> list[dict[str, Any]]:
    """The interrupts the gateway's hydrate offers for the thread (none: `[]`)."""
    response = await http.get("/agents/assistant", params={"threadId": thread_id})
    assert response.status_code == 200, response.text
    return list((response.json()["interrupts"] or {}).get("pending", []))
