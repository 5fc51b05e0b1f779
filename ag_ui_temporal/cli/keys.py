"""`ag-ui-temporal hash-key`: make an API key (or hash a given one) and print the entry
`API_KEYS_FILE` takes. Only the hash is kept; the key is shown once, on stderr."""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from typing import Any


def add_command(commands: Any) -> None:
    parser = commands.add_parser(
        "hash-key", help="make an API key (or hash a given one) and print its API_KEYS_FILE entry"
    )
    parser.add_argument("--principal", required=True)
    parser.add_argument("--group", action="append", default=[], dest="groups")
    parser.add_argument("--stdin", action="store_true", help="hash the key read from stdin")


def hash_key_command(principal: str, groups: list[str], given: str | None) -> tuple[str, str]:
    """(the entry as one JSON line, the new key or "" when one was given)."""
    # imported here: the gateway's auth loads FastAPI and the store, which every other
    # command's parser (and the processes' start) would pay for
    from ag_ui_temporal.gateway.auth import ApiKeyEntry, hash_key

    key = given.strip() if given else secrets.token_urlsafe(32)
    entry = ApiKeyEntry(sha256=hash_key(key), principal=principal, groups=groups)
    return json.dumps(entry.model_dump()), "" if given else key


def run(args: argparse.Namespace) -> None:
    given = sys.stdin.readline() if args.stdin else None
    entry, key = hash_key_command(args.principal, args.groups, given)
    if key:
        print(f"key (give it to the client; only its hash is kept): {key}", file=sys.stderr)
    print(entry)
