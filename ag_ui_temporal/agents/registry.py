"""The pydantic-ai agents a thread can run, by name.

The worker registers them before it starts (a `TemporalDurability` agent must be built
outside any workflow, so that its activities exist on the worker); thread workflows
look them up by the thread's agent name. This module is shared with the workflow
sandbox, so the workflow sees the worker's own agent objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.durable_exec.temporal import TemporalDurability

from ag_ui_temporal.agents.thread import ThreadEvents


@dataclass(frozen=True)
class Registered:
    agent: Agent[Any, Any]
    description: str
    approve_with_edits: bool
    """What `GET /agents/{agent}/capabilities` says of this agent."""
    refusals_end_the_turn: bool = False
    """When a person refuses every call the agent asked about, the run ends with the calls'
    results and a sentence, without asking the model again (see `register`)."""


_AGENTS: dict[str, Registered] = {}


def register(
    agent: Agent[Any, Any],
    *,
    description: str = "",
    approve_with_edits: bool = True,
    refusals_end_the_turn: bool = False,
    replace: bool = False,
) -> Agent[Any, Any]:
    """Serve `agent` in threads under `agent.name` (`POST /agents/{name}`).

    `refusals_end_the_turn`: when every call the agent asked about is refused (rejected,
    answered no, cancelled, expired), the run writes each call's result ("you rejected it")
    and says "I did not carry out ..." itself instead of running the model again: a
    refusal then costs no model call (the model reads the results on the next run).

    The agent must carry `thread_capabilities()`: the thread's events come from
    `ThreadEvents`, durability from `TemporalDurability`."""
    name = agent.name
    if not name:
        raise ValueError("an agent served in threads needs a name: Agent(..., name='support')")
    if name in _AGENTS and not replace:
        raise ValueError(f"an agent named {name!r} is already registered")
    missing = [
        kind.__name__ for kind in (ThreadEvents, TemporalDurability) if not _has(agent, kind)
    ]
    if missing:
        raise ValueError(
            f"agent {name!r} lacks {', '.join(missing)}: "
            "build it with Agent(..., capabilities=thread_capabilities())"
        )
    _AGENTS[name] = Registered(agent, description, approve_with_edits, refusals_end_the_turn)
    return agent


def _has(agent: Agent[Any, Any], kind: type[Any]) -> bool:
    found: list[object] = []
    agent.root_capability.apply(lambda leaf: found.append(leaf) if isinstance(leaf, kind) else None)
    return bool(found)


def registered(name: str) -> Registered | None:
    return _AGENTS.get(name)


def all_registered() -> dict[str, Registered]:
    return dict(_AGENTS)
