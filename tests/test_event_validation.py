"""The end-of-session AG-UI validation (`tests/conftest.py`): every stream a test received is
checked by `@ag-ui/core`, and a suite that could not check them fails instead of passing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import node_clients
from tests.node_clients import requires_node, validate_streams

STARTED = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
FINISHED = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}


@pytest.mark.parametrize("missing", ["node", "node_modules"])
async def test_streams_without_node_to_check_them_fail_the_session(
    missing: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    if missing == "node":
        monkeypatch.setenv("PATH", str(tmp_path))
    else:
        monkeypatch.setattr(node_clients, "NODE_DIR", tmp_path)
    with pytest.raises(pytest.fail.Exception, match="1 AG-UI event streams left unvalidated"):
        await validate_streams([[STARTED, FINISHED]])


async def test_no_streams_need_no_node(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setattr(node_clients, "NODE_DIR", tmp_path)
    await validate_streams([])


@requires_node
async def test_a_valid_stream_passes_and_an_invalid_one_fails():
    await validate_streams([[STARTED, FINISHED]])
    with pytest.raises(AssertionError, match="in 2 streams"):
        await validate_streams([[STARTED, FINISHED], [FINISHED, STARTED]])
