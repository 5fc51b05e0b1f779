"""The agents a thread can run, by name: pydantic-ai agents (`register`), LangGraph graphs
(`agents.graphs.register_graph`), OpenAI Agents SDK agents
(`agents.openai_agents.register_openai_agent`) and Google ADK agents
(`agents.adk_agents.register_adk_agent`), one name for one of them; and the activities
their tools call (`register_activities`), which every thread worker of the process runs.

The worker registers them before it starts (a `TemporalDurability` agent must be built
outside any workflow, so that its activities exist on the worker); thread workflows
look them up by the thread's agent name. This module is shared with the workflow
sandbox, so the workflow sees the worker's own agent objects.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from pydantic_ai import Agent
from pydantic_ai.durable_exec.temporal import TemporalDurability
from temporalio import workflow

from ag_ui_temporal.agents.thread import ThreadEvents
from ag_ui_temporal.workflows.contract.standing import checked_offer

if TYPE_CHECKING:  # the sandbox shares this module: it loads neither at runtime
    from sqlalchemy.ext.asyncio import AsyncEngine
    from temporalio.client import Client

    from ag_ui_temporal.settings import Settings


@dataclass(frozen=True)
class Registered:
    agent: Agent[Any, Any]
    description: str
    approve_with_edits: bool
    """Whether its tool approvals take `editedArgs` (see `register`); what
    `GET /agents/{agent}/capabilities` says of this agent."""
    refusals_end_the_turn: bool = False
    """When a person refuses every call the agent asked about, the run ends with the calls'
    results and a sentence, without asking the model again (see `register`)."""
    workflow_agent: str | None = None
    """`module:Class` of the workflow-side agent that runs it in a thread, when not the
    usual one (see `register`)."""
    approve_client_tools: frozenset[str] = frozenset()
    """The client tools (`RunAgentInput.tools`, by name) a person approves before the client
    runs them (see `register`)."""
    standing_approvals: timedelta | None = None
    """The longest standing decision its tool approvals offer (None: none; see `register`)."""


@dataclass(frozen=True)
class GraphTool:
    """A tool a graph asks about (`register_graph(approval_tools=...)`)."""

    name: str
    description: str
    parameters: dict[str, Any]
    """The JSON Schema of its arguments, as `ask_tool_call` announces it."""


@dataclass(frozen=True)
class RegisteredGraph:
    """A LangGraph graph served in threads (`agents.graphs.register_graph`). Typed loosely
    here: this module must import without the `langgraph` extra."""

    name: str
    graph: Any
    """The `StateGraph`, its nodes wrapped by `plugin`; or an `@entrypoint`'s `Pregel`, its
    tasks wrapped."""
    plugin: Any
    """The `LangGraphPlugin` that wrapped its nodes, once per process: their activities, which
    every worker of the process gets (`agents.graphs.GraphsPlugin`)."""
    activities: frozenset[str]
    """The names of its nodes' activities (`<graph>.<node>`; a task's: `<module>.<function>`)."""
    description: str
    approve_with_edits: bool
    options: Any
    """How its interrupts are asked and expire (`agents.graphs`)."""
    approval_tools: tuple[GraphTool, ...] = ()
    """The tools its nodes ask about (`ask_tool_call`), as far as `register_graph` was told."""
    standing_approvals: timedelta | None = None
    """The longest standing decision its tool approvals offer (None: none; see `register`)."""


@dataclass(frozen=True)
class RegisteredOpenAIAgent:
    """An OpenAI Agents SDK agent served in threads (`agents.openai_agents.
    register_openai_agent`). Typed loosely here: this module must import without the
    `openai-agents` extra."""

    name: str
    agent: Any
    """The `agents.Agent`."""
    description: str
    options: Any
    """How it runs and asks (`agents.openai_agents.OpenAIAgentOptions`)."""
    model_provider: Any = None
    """What makes its models in the model activity (None: OpenAI's own provider)."""
    approve_with_edits: bool = False
    """The SDK runs an approved call with the model's arguments only."""
    standing_approvals: timedelta | None = None
    """The longest standing decision its tool approvals offer (None: none; see `register`)."""


@dataclass(frozen=True)
class RegisteredAdkAgent:
    """A Google ADK agent served in threads (`agents.adk_agents.register_adk_agent`). Typed
    loosely here: this module must import without the `google-adk` extra."""

    name: str
    agent: Any
    """The ADK agent as threads run it: its models `ThreadModel`s."""
    description: str
    options: Any
    """How it runs and asks (`agents.adk_agents.AdkAgentOptions`)."""
    approve_with_edits: bool = False
    """ADK runs an approved call with the model's arguments only."""
    standing_approvals: timedelta | None = None
    """The longest standing decision its tool approvals offer (None: none; see `register`)."""


@dataclass(frozen=True)
class WorkerResources:
    """What a thread worker hands the activities it makes (`register_activities`)."""

    client: Client
    """The worker's Temporal client, with the thread workers' data converter."""
    settings: Settings
    """The worker's settings."""
    store: AsyncEngine
    """The store's engine, one pool for the worker: `Outbox(store)` records an effect once per
    key (docs/tools.md)."""


ActivityFactory: TypeAlias = Callable[[WorkerResources], Iterable[Callable[..., Any]]]
"""Makes a worker's activities from its resources: called once for each worker built."""

Served: TypeAlias = Registered | RegisteredGraph | RegisteredOpenAIAgent | RegisteredAdkAgent
"""An agent served in threads, of any framework."""
_SERVED: dict[str, Served] = {}
"""By name: one name for one agent, whatever its framework."""
_ACTIVITIES: dict[ActivityFactory, None] = {}
"""An ordered set: a factory that two modules register is called once per worker."""


def register(
    agent: Agent[Any, Any],
    *,
    description: str = "",
    approve_with_edits: bool = True,
    refusals_end_the_turn: bool = False,
    replace: bool = False,
    workflow_agent: str | None = None,
    approve_client_tools: Collection[str] = (),
    standing_approvals: timedelta | None = None,
) -> Agent[Any, Any]:
    """Serve `agent` in threads under `agent.name` (`POST /agents/{name}`).

    `approve_with_edits`: whether a person approving a call may replace its arguments. With
    False, each approval's `responseSchema` is TanStack's envelope without `editedArgs` (as
    for a tool without an input schema), so a resume carrying edits is `INVALID_PAYLOAD`, and
    the capabilities say `approveWithEdits: false`.

    `refusals_end_the_turn`: when every call the agent asked about is refused (rejected,
    answered no, cancelled, expired), the run writes each call's result ("you rejected it")
    and says "I did not carry out ..." itself instead of running the model again: a
    refusal then costs no model call (the model reads the results on the next run).

    `workflow_agent`: `module:Class` of a workflow-side agent (`workflows.thread.agents.Agent`)
    that runs this one in its threads instead of the usual `LlmAgent`. The thread imports it
    inside the workflow sandbox, by name, so that the library never imports the code that
    defines it (tests use it to make a thread's workflow task fail). It is imported here
    too: a wrong name fails at registration, and what it shares with the sandbox is loaded
    before a workflow task, whose deadline an import would eat into.

    `approve_client_tools`: the names of client tools (the tools a client sends in
    `RunAgentInput.tools`, e.g. TanStack AI's `.client()` tools declared with
    `needsApproval: true`) that a person approves before the client runs them. The client's
    request does not say which need approval (TanStack's sends only name, description and
    parameters), so the agent does, as TanStack's own server knows it from the shared tool
    definition. A call of one is a `tool_call` interrupt first; approved, it goes to the client
    like any client tool's call (with the edited arguments, if any), rejected it never does.
    A client may also mark one of its tools `needsApproval: true` in `RunAgentInput.tools`: it
    can only make its own tool stricter.

    `standing_approvals`: the person answering an approval may make the answer stand, in that
    thread, for later calls of the tool (with any arguments, or the same), for up to this long
    (`workflows.contract.standing`): those calls go ahead, or are refused, without asking.

    The agent must carry `thread_capabilities()`: the thread's events come from
    `ThreadEvents`, durability from `TemporalDurability`."""
    name = agent.name
    if not name:
        raise ValueError("an agent served in threads needs a name: Agent(..., name='support')")
    _claim(name, Registered, replace=replace)
    missing = [
        kind.__name__ for kind in (ThreadEvents, TemporalDurability) if not _has(agent, kind)
    ]
    if missing:
        raise ValueError(
            f"agent {name!r} lacks {', '.join(missing)}: "
            "build it with Agent(..., capabilities=thread_capabilities())"
        )
    if workflow_agent is not None:
        workflow_agent_class(workflow_agent)
    if isinstance(approve_client_tools, str):  # a str is a Collection[str] of its letters
        raise TypeError("approve_client_tools takes tool names: approve_client_tools=['pickDate']")
    _SERVED[name] = Registered(
        agent,
        description,
        approve_with_edits,
        refusals_end_the_turn,
        workflow_agent,
        frozenset(approve_client_tools),
        checked_offer(standing_approvals),
    )
    return agent


def workflow_agent_class(path: str) -> type[Any]:
    """The class `module:Class` names: a registered agent's own workflow agent, imported on the
    host when it is registered, and into each workflow's sandbox when a thread runs it; or a
    framework's host (`workflows.thread.agents.HOSTS`), imported by a thread that runs one.

    In a workflow it is a deliberate import after the workflow loaded (the library does not
    import the modules that serve agents), so the sandbox is told not to warn; it is the same
    import on every replay. `__import__`, not `importlib`: the sandbox's import hook is the
    builtin one."""
    module, _, attr = path.partition(":")
    with workflow.unsafe.sandbox_import_notification_policy(
        workflow.SandboxImportNotificationPolicy.SILENT
    ):
        found = __import__(module, fromlist=[attr])
    if not hasattr(found, attr):
        raise ValueError(f"workflow_agent {path!r}: {module} has no {attr!r}")
    agent: type[Any] = getattr(found, attr)
    return agent


def _has(agent: Agent[Any, Any], kind: type[Any]) -> bool:
    found: list[object] = []
    agent.root_capability.apply(lambda leaf: found.append(leaf) if isinstance(leaf, kind) else None)
    return bool(found)


def served(name: str) -> Served | None:
    """The agent `name`, of whichever framework."""
    return _SERVED.get(name)


def all_served() -> dict[str, Served]:
    """Every agent, in the order registered."""
    return dict(_SERVED)


def registered(name: str) -> Registered | None:
    return _one(Registered, name)


def all_registered() -> dict[str, Registered]:
    return _all(Registered)


def add_graph(entry: RegisteredGraph, *, replace: bool = False) -> None:
    """Serve a LangGraph graph under `entry.name` (`agents.graphs.register_graph`)."""
    _claim(entry.name, RegisteredGraph, replace=replace)
    _SERVED[entry.name] = entry


def registered_graph(name: str) -> RegisteredGraph | None:
    return _one(RegisteredGraph, name)


def all_registered_graphs() -> dict[str, RegisteredGraph]:
    return _all(RegisteredGraph)


def add_openai_agent(entry: RegisteredOpenAIAgent, *, replace: bool = False) -> None:
    """Serve an OpenAI Agents SDK agent under `entry.name` (`register_openai_agent`)."""
    _claim(entry.name, RegisteredOpenAIAgent, replace=replace)
    _SERVED[entry.name] = entry


def registered_openai_agent(name: str) -> RegisteredOpenAIAgent | None:
    return _one(RegisteredOpenAIAgent, name)


def all_registered_openai_agents() -> dict[str, RegisteredOpenAIAgent]:
    return _all(RegisteredOpenAIAgent)


def add_adk_agent(entry: RegisteredAdkAgent, *, replace: bool = False) -> None:
    """Serve a Google ADK agent under `entry.name` (`register_adk_agent`)."""
    _claim(entry.name, RegisteredAdkAgent, replace=replace)
    _SERVED[entry.name] = entry


def registered_adk_agent(name: str) -> RegisteredAdkAgent | None:
    return _one(RegisteredAdkAgent, name)


def all_registered_adk_agents() -> dict[str, RegisteredAdkAgent]:
    return _all(RegisteredAdkAgent)


_Kind = TypeVar("_Kind", Registered, RegisteredGraph, RegisteredOpenAIAgent, RegisteredAdkAgent)


def _one(kind: type[_Kind], name: str) -> _Kind | None:
    entry = _SERVED.get(name)
    return entry if isinstance(entry, kind) else None


def _all(kind: type[_Kind]) -> dict[str, _Kind]:
    return {name: entry for name, entry in _SERVED.items() if isinstance(entry, kind)}


def _claim(name: str, kind: type[Served], *, replace: bool) -> None:
    """One name for one agent, whatever its framework: `replace` takes the name from an
    agent of the same framework only."""
    known = _SERVED.get(name)
    if known is not None and not (replace and isinstance(known, kind)):
        raise ValueError(f"an agent named {name!r} is already registered")


def register_activities(make: ActivityFactory) -> ActivityFactory:
    """Run the activities `make` returns on every thread worker of this process (its
    `ThreadWorkerPlugin`): the activities an agent's or a graph's tools call by name, e.g.
    `workflow.execute_activity("refundOrder", ...)`. A module of `AGENT_MODULES` registers
    them beside its agents, since they need what only a worker has (its client, its store):

        @register_activities
        def billing(worker: WorkerResources) -> list[Callable[..., Any]]:
            return [BillingTools(Outbox(worker.store)).refund_order]

    The same `make` registered again (by two modules) is called once. An activity given to
    the plugin itself (`ThreadWorkerPlugin(activities=...)`) takes the place of one of the
    same name made here."""
    _ACTIVITIES[make] = None
    return make


def registered_activities() -> list[ActivityFactory]:
    return list(_ACTIVITIES)
