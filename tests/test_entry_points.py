"""Every entry point we ship whose process holds a Temporal client leaves through
`temporal_client.exit_stopped`: Temporal's bridge threads can call into a finalizing interpreter and
abort a process that did everything right (temporalio/sdk-python#300; intermittent, so the
rule is checked on the code, and one example runs for real)."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import sys
import uuid
from pathlib import Path

from temporalio.client import Client

from tests.modules import package_modules, parsed

ROOT = Path(__file__).parents[1]
BRIDGE = "temporalio.bridge.temporal_sdk_bridge"


def shipped_modules() -> dict[str, Path]:
    return package_modules()


def main_block(path: Path) -> ast.If | None:
    for node in parsed(path).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "__name__ == '__main__'":
            return node
    return None


def calls(node: ast.AST) -> set[str]:
    return {ast.unparse(call.func) for call in ast.walk(node) if isinstance(call, ast.Call)}


async def loads_the_bridge(module: str) -> bool:
    imported = f"import importlib, sys; importlib.import_module({module!r})"
    code = f"{imported}; print({BRIDGE!r} in sys.modules)"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, cwd=ROOT, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await process.communicate()
    assert process.returncode == 0, module
    return out.decode().strip() == "True"


async def test_every_entry_point_with_a_temporal_client_leaves_through_exit_stopped():
    mains = {name: block for name, path in shipped_modules().items() if (block := main_block(path))}
    assert "ag_ui_temporal.examples.order_approval" in mains  # the scan sees the examples
    with_bridge = await asyncio.gather(*(loads_the_bridge(name) for name in mains))
    temporal = {name for name, bridge in zip(mains, with_bridge, strict=True) if bridge}
    assert "ag_ui_temporal.examples.order_approval" in temporal
    assert [name for name in sorted(temporal) if "exit_stopped" not in calls(mains[name])] == []

    # the console script (and `python -m ag_ui_temporal.cli`): the processes' commands end there too
    tree = parsed(ROOT / "ag_ui_temporal" / "cli" / "__init__.py")
    [main] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main"]
    assert "exit_stopped" in calls(main)
    assert "main" in calls(parsed(ROOT / "ag_ui_temporal" / "cli" / "__main__.py"))


async def test_the_order_example_exits_0(client: Client):
    queue, order = f"orders-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex[:8]
    env = {**os.environ, "TEMPORAL_ADDRESS": client.service_client.config.target_host}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "ag_ui_temporal.examples.order_approval", "--thread-id", f"t-{order}",
        "--order-id", order, "--task-queue", queue, env=env, cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 120)  # a hang guard
    assert process.returncode == 0, err.decode()
    started = json.loads(out)
    assert started["threadId"] == f"t-{order}"
    handle = client.get_workflow_handle(started["workflowId"])
    await handle.terminate("no worker serves this order's queue")  # it started, for real
