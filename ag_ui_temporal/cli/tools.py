"""`ag-ui-temporal tools AGENT`: the TanStack AI definitions of the tools an agent asks a person
to approve, as TypeScript (the file `GET /agents/{agent}/tools.ts` serves), on stdout or into
a file. The agents are those the gateway serves: those `AGENT_MODULES` register."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ag_ui_temporal.settings import Settings


def add_command(commands: Any) -> None:
    parser = commands.add_parser(
        "tools",
        help="write the TanStack AI definitions of an agent's approval tools (TypeScript)",
        description=__doc__,
    )
    parser.add_argument("agent", help="the agent's name, as in /agents/{agent}")
    parser.add_argument("-o", "--output", type=Path, help="the .ts file to write (else stdout)")


def run(settings: Settings, args: argparse.Namespace) -> int:
    # imported here: building the agents loads pydantic-ai, which `--help` should not
    from ag_ui_temporal.gateway.approval_tools import served_agents, typescript_module

    agents = served_agents(settings)
    if args.agent not in agents:
        print(f"unknown agent {args.agent!r}; the agents: {', '.join(agents)}", file=sys.stderr)
        return 2
    module = typescript_module(args.agent)
    if args.output is None:
        sys.stdout.write(module)
        return 0
    args.output.write_text(module, encoding="utf-8")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0
