"""`ag-ui-temporal hash-key`: a new key is shown once (stderr) and only its hash is kept in
the entry (stdout), which `API_KEYS_FILE` loads as it is."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ag_ui_temporal.cli import main
from ag_ui_temporal.gateway.auth import hash_key, load_api_keys


def entry_file(tmp_path: Path, line: str) -> Path:
    path = tmp_path / "keys.json"
    path.write_text(f"[{line}]")
    return path


def test_a_new_key_is_printed_once_and_only_its_hash_kept(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
):
    main(["hash-key", "--principal", "alice", "--group", "ops", "--group", "dev"])
    out, err = capsys.readouterr()
    key = err.rsplit(" ", 1)[-1].strip()
    assert len(key) >= 40 and key not in out
    [entry] = load_api_keys(entry_file(tmp_path, out))
    assert (entry.sha256, entry.principal, entry.groups) == (hash_key(key), "alice", ["ops", "dev"])


def test_a_given_key_is_hashed_and_not_printed_back(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    monkeypatch.setattr("sys.stdin", io.StringIO("bob-secret-key\n"))
    main(["hash-key", "--principal", "bob", "--stdin"])
    out, err = capsys.readouterr()
    assert err == "" and "bob-secret-key" not in out
    [entry] = load_api_keys(entry_file(tmp_path, out))
    assert (entry.sha256, entry.groups) == (hash_key("bob-secret-key"), [])
