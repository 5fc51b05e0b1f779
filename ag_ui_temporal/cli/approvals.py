"""`ag-ui-temporal approvals list|show|approve|reject`: the approvals inbox from a terminal.

Talks to a running gateway over HTTP (dev auth: `X-Principal`), exactly as a UI does:
approving is one decision on the step's interrupt (`POST /interrupts/{id}`), which the
gateway sends to the approver's inbox thread as a run.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # httpx (with its own CLI's rich and pygments) loads when a command runs
    import httpx


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
    import httpx

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
    """Resolve `principal`'s waiting seat of `chain` through the decision API. Returns the
    end of the run that carried it (`RUN_FINISHED`, with its `threadId` and `runId`) and the
    decision (`interruptId`, `status`, `replayed`); a refusal exits with its code."""
    items = _get(http, "/approvals", {"assignee": principal, "status": "pending"}, _as(principal))[
        "items"
    ]
    mine = [item for item in items if item["chain"] == chain]
    if not mine:
        raise SystemExit(f"nothing of chain {chain} waits for {principal}")
    payload: dict[str, Any] = {"decision": decision}
    if comment:
        payload["comment"] = comment
    body = {"threadId": mine[0]["thread"], "status": "resolved", "payload": payload, "via": "cli"}
    response = http.post(f"/interrupts/{mine[0]['interrupt']}", json=body, headers=_as(principal))
    if response.status_code != 200:
        raise SystemExit(_refusal(response))
    decided: dict[str, Any] = response.json()
    return {"type": "RUN_FINISHED", **decided}


def _refusal(response: httpx.Response) -> str:
    """`CODE: message` of a refused decision (or the HTTP status of another answer)."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and "code" in body:
        return f"{body['code']}: {body.get('message')}"
    return f"HTTP {response.status_code}: {response.text[:200]}"


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
