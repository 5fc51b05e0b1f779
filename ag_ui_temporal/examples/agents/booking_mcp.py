"""A small MCP server (the official `mcp` SDK) whose tool asks the user for input.

`book_table` elicits the date and party size (`elicitation/create`) before it books:
a tool that asks should ask before it acts, because a durable client re-runs the tool
up to its question when the answer arrives (docs/agents.md, "MCP servers and
elicitation"). Over stdio: `python ag_ui_temporal/examples/agents/booking_mcp.py`; over streamable
HTTP: `... --http 8765` (served at http://127.0.0.1:8765/mcp). With `--log FILE` every
answer the tool receives is appended to FILE as a JSON line (the tests read it).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import (
    AcceptedElicitation,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
)
from pydantic import BaseModel, Field

server = MCPServer("booking", log_level="WARNING")
LOG: Path | None = None


class Booking(BaseModel):
    date: str = Field(description="The day, as YYYY-MM-DD", json_schema_extra={"format": "date"})
    party_size: int = Field(ge=1, le=12, description="How many people")


class Name(BaseModel):
    name: str = Field(description="The name the table is booked under")


def _heard(restaurant: str, question: str, answer: ElicitationResult[Any]) -> None:
    if LOG is not None:
        content = None
        if isinstance(answer, AcceptedElicitation) and answer.data is not None:
            content = answer.data.model_dump()
        line = {
            "restaurant": restaurant,
            "question": question,
            "action": answer.action,
            "content": content,
        }
        with LOG.open("a") as log:
            log.write(json.dumps(line) + "\n")


async def ask_booking(restaurant: str) -> Elicit[Booking]:
    return Elicit(f"When and for how many at {restaurant}?", Booking)


async def ask_name(
    booking: Annotated[ElicitationResult[Booking], Resolve(ask_booking)],
) -> Elicit[Name] | None:
    """The name only once the user said when: a declined booking asks nothing more."""
    return Elicit("Under which name?", Name) if booking.action == "accept" else None


@server.tool()
async def book_table(
    restaurant: str,
    booking: Annotated[ElicitationResult[Booking], Resolve(ask_booking)],
    name: Annotated[ElicitationResult[Name], Resolve(ask_name)],
) -> str:
    """Book a table at a restaurant; asks the user for the date, the party size and a name."""
    _heard(restaurant, "booking", booking)
    if not isinstance(booking, AcceptedElicitation):
        return f"No table booked at {restaurant}: the user chose to {booking.action}."
    _heard(restaurant, "name", name)
    if not isinstance(name, AcceptedElicitation) or name.data is None:
        return f"No table booked at {restaurant}: no name was given."
    when = booking.data
    return (
        f"Booked a table at {restaurant} on {when.date} for {when.party_size} "
        f"under {name.data.name}."
    )


def main() -> None:
    global LOG
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", type=int, metavar="PORT", help="streamable HTTP on this port")
    parser.add_argument("--log", type=Path, help="append the answers the tool receives here")
    args = parser.parse_args()
    LOG = args.log
    if args.http is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.http)


if __name__ == "__main__":
    main()
