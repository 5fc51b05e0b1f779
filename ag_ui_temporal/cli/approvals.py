"""`ag-ui-temporal approvals list|show|approve|reject`: the approvals inbox from a terminal.

Talks to a running gateway over HTTP (dev auth: `X-Principal`), exactly as a UI does:
approving is a resume of the step's interrupt in the approver's inbox thread.
"""

from __future__ import annotations

import argparse
import json
import uuid
from typing import Any

import httpx

from ag_ui_temporal.workflows.contract.chains import inbox_thread


def add_commands(commands: Any) -> None:
    approvals = commands.add_parser("approvals", help="list, show and answer approval chains")
    approvals.add_argument("--url", help="the gateway (default: GATEWAY_HOST:GATEWAY_PORT)")
    sub = approvals.add_subparsers(dest="action", required=True)
    listing = sub.add_parser("list", help="chains waiting for (or done by) a principal")
    listing.add_argument("--assignee", "--as", dest="principal", required=True)
    listing.add_argument("--status", choices=["pending", "done"], default="pending")
    show = sub.add_parser("show", help="one chain: steps, decisions, audit trail")
    show.add_argument("chain")
    show.add_argument(
        "--as",
        dest="principal",
        help="read as this principal (its requester, a participant or an admin)",
    )
    for name in ("approve", "reject"):
        answer = sub.add_parser(name, help=f"{name} the step waiting for you in a chain")
        answer.add_argument("chain")
        answer.add_argument("--as", dest="principal", required=True)
        answer.add_argument("--comment")


def run(args: argparse.Namespace, default_url: str) -> int:
    with httpx.Client(base_url=args.url or default_url, timeout=30) as http:
        if args.action == "list":
            params = {"assignee": args.principal, "status": args.status}
            return _print(_get(http, "/approvals", params, _as(args.principal)))
        if args.action == "show":
            return _print(_get(http, f"/approvals/{args.chain}", None, _as(args.principal)))
        decision = "approve" if args.action == "approve" else "reject"
        return _print(answer(http, args.chain, args.principal, decision, args.comment))


def _as(principal: str | None) -> dict[str, str] | None:
    """Dev auth: who the gateway sees (only a participant may read a chain or a list)."""
    return {"X-Principal": principal} if principal else None


def answer(
    http: httpx.Client, chain: str, principal: str, decision: str, comment: str | None = None
) -> dict[str, Any]:
    """Resolve `principal`'s waiting interrupt of `chain`; returns the resumed run's end."""
    items = _get(http, "/approvals", {"assignee": principal, "status": "pending"}, _as(principal))[
        "items"
    ]
    mine = [item for item in items if item["chain"] == chain]
    if not mine:
        raise SystemExit(f"nothing of chain {chain} waits for {principal}")
    thread, interrupt_id = inbox_thread(principal), mine[0]["interrupt"]
    headers = {"X-Principal": principal}
    state = _get(http, "/agents/inbox", {"threadId": thread}, headers)
    pending = (state.get("interrupts") or {}).get("interrupts") or []
    if not any(i["id"] == interrupt_id for i in pending):  # offered, not delivered yet
        _run(http, thread, headers, {})
    payload: dict[str, Any] = {"decision": decision}
    if comment:
        payload["comment"] = comment
    resume = [{"interruptId": interrupt_id, "status": "resolved", "payload": payload}]
    return _run(http, thread, headers, {"resume": resume})


def _run(
    http: httpx.Client, thread: str, headers: dict[str, str], extra: dict[str, Any]
) -> dict[str, Any]:
    """One run of the inbox thread; its last event (RUN_FINISHED), or exit on RUN_ERROR."""
    body = {"threadId": thread, "runId": f"cli-{uuid.uuid4().hex[:12]}", "messages": [], **extra}
    response = http.post("/agents/inbox", json=body, headers=headers)
    response.raise_for_status()
    events = [
        json.loads(line[len("data: ") :])
        for line in response.text.splitlines()
        if line.startswith("data: ")
    ]
    last: dict[str, Any] = events[-1]
    if last["type"] == "RUN_ERROR":
        raise SystemExit(f"{last.get('code')}: {last.get('message')}")
    return last


def _get(
    http: httpx.Client,
    path: str,
    params: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
) -> Any:
    response = http.get(path, params=params, headers=headers)
    if response.status_code == 404:
        raise SystemExit(response.json().get("detail", "not found"))
    response.raise_for_status()
    return response.json()


def _print(value: Any) -> int:
    print(json.dumps(value, indent=2))
    return 0
