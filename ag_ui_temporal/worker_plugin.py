"""`ThreadWorkerPlugin`: a Temporal worker of the team's own that hosts chat threads, with
the team's agents and activities.

    client = await Client.connect("temporal:7233")  # a plain client
    worker = Worker(
        client,
        task_queue=TASK_QUEUE,  # the thread workers' queue (`TASK_QUEUE`), the gateway's too
        plugins=[ThreadWorkerPlugin(activities=[billing.refund_order])],
    )

The plugin gives the worker what threads need, and nothing of the demo:

- the workflows: `ThreadWorkflow`, `ApprovalChain`, `AguiNotification`;
- the library's activities: the thread's archive, the audit trail, notifications, the
  producers' signals;
- the agents and graphs the process registered (`register`, `register_graph`,
  `register_openai_agent`, `register_adk_agent`; the modules of `AGENT_MODULES` register
  theirs when the plugin imports them), the activities pydantic-ai, LangGraph, the OpenAI
  Agents SDK and ADK make for them
  (and for the agents their `delegate` tools run), the activities registered beside them
  (`register_activities`) and those given to it;
- the sandbox's passthroughs and the thread workers' data converter;
- the heartbeats that tell a stopped run's activities so.

The worker keeps what is its own: executor, cache size, versioning. `ag-ui-temporal worker`
builds its worker with this plugin (`worker.build_worker`).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

from pydantic_ai.durable_exec.temporal import AgentPlugin, PydanticAIPlugin
from temporalio import activity
from temporalio.client import Client, WorkflowHistory
from temporalio.plugin import SimplePlugin
from temporalio.worker import (
    Plugin,
    Replayer,
    ReplayerConfig,
    Worker,
    WorkerConfig,
    WorkflowReplayResult,
    WorkflowRunner,
)
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from ag_ui_temporal.agents.catalog import import_agent_modules
from ag_ui_temporal.agents.delegation import delegated_agents
from ag_ui_temporal.agents.registry import (
    WorkerResources,
    all_registered,
    all_registered_adk_agents,
    all_registered_graphs,
    all_registered_openai_agents,
    registered_activities,
)
from ag_ui_temporal.audit import AuditActivities
from ag_ui_temporal.heartbeats import HEARTBEAT_EVERY, Heartbeats
from ag_ui_temporal.notify.activities import Notifier
from ag_ui_temporal.plugin import PASSTHROUGH_MODULES, data_converter
from ag_ui_temporal.settings import Settings, get_settings
from ag_ui_temporal.store import AuditLog, Transcript, audit_keys, open_engine
from ag_ui_temporal.workflows.chains.workflow import ApprovalChain
from ag_ui_temporal.workflows.notices import AguiNotification
from ag_ui_temporal.workflows.producers.thread_signals import ThreadSignals
from ag_ui_temporal.workflows.thread.archive import ArchiveActivities
from ag_ui_temporal.workflows.thread.workflow import ThreadWorkflow

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

# Modules that only define data (pydantic models, tool schemas) are shared with
# the sandbox instead of re-imported for every workflow it loads: it halves the
# cost of starting or replaying a thread. Workflow logic stays sandboxed, except
# `workflows.schema`: pure functions whose cache of checked schemas must be shared.
DATA_MODULES: Final = (
    *PASSTHROUGH_MODULES,  # what a producer's workflow shares too
    # the pydantic-ai agents: the worker's own objects, built outside any workflow
    "ag_ui_temporal.agents",
    "ag_ui_temporal.workflows.thread.state",
    "ag_ui_temporal.workflows.thread.tool_calls",
    # the demo's tool schemas, which its workflow side reads when a worker serves the demo (a
    # name the process never imports costs nothing)
    "ag_ui_temporal.demo.tools",
    "ag_ui_temporal.workflows.chains.definitions",
    "ag_ui_temporal.workflows.chains._state",
)
# OpenTelemetry (and our tracing interceptor) must be the process's own modules in the
# sandbox, or workflow spans would not reach the process's tracer provider.
TRACING_MODULES: Final = ("opentelemetry", "ag_ui_temporal.observability")
# Modules a workflow task would otherwise import for the first time, imported when the worker
# is built instead. A passthrough module missing from the process is imported by the task that
# first asks for it, inside the task's 2 s deadlock timeout: the MCP stack alone takes 1-2 s, so
# that task failed as a potential deadlock (TMPRL1101) and was retried. They are passed through
# (as pydantic-ai's plugin also does) so the sandbox takes the worker's copy, never a new one.
PRELOADED_MODULES: Final = (
    # pydantic-ai's durable layer sorts the toolsets a run is given (the client's frontend
    # tools, `RunAgentInput.tools`) with `from pydantic_ai.mcp import MCPToolset`, in the
    # workflow, whether or not an agent uses an MCP server; it loads fastmcp and the `mcp` SDK.
    # Passed through: `isinstance` against the class the agents' toolsets were built with, and
    # fastmcp resolves its config directory (`Path.expanduser`) at import, which the sandbox
    # refuses.
    "pydantic_ai.mcp",
)
# Import hooks the process installed run for modules a sandboxed workflow imports; their own
# modules must be the process's, or a new workflow instance re-imports them. beartype's hook
# (which fastmcp's `key_value` installs for itself) loads the modules of every directory first
# searched after it, and asks `sys.modules` (the sandbox's, there) for its own state: missing,
# it imported beartype anew in the instance.
IMPORT_HOOK_MODULES: Final = ("beartype",)
WORKFLOWS: Final = (ThreadWorkflow, ApprovalChain, AguiNotification)


def sandboxed(runner: WorkflowRunner | None) -> WorkflowRunner:
    """The worker's sandbox with the modules above passed through (any other runner as it
    is: it shares every module already)."""
    runner = runner or SandboxedWorkflowRunner()
    if not isinstance(runner, SandboxedWorkflowRunner):
        return runner
    restrictions = runner.restrictions.with_passthrough_modules(
        *DATA_MODULES, *TRACING_MODULES, *PRELOADED_MODULES, *IMPORT_HOOK_MODULES
    )
    return dataclasses.replace(runner, restrictions=restrictions)


SANDBOX: Final = sandboxed(None)
"""The thread workers' sandbox, for a `Replayer` or a worker built without the plugin."""


def preload_workflow_imports() -> None:
    """Import `PRELOADED_MODULES` in the worker's process, before it polls (see there)."""
    for name in PRELOADED_MODULES:
        importlib.import_module(name)


class ThreadWorkerPlugin(SimplePlugin):
    """`Worker(client, task_queue=TASK_QUEUE, plugins=[ThreadWorkerPlugin()])`.

    `settings`: the thread workers' settings (default: the environment's, `Settings()`); its
    `AGENT_MODULES` are imported here, and the worker serves every agent and graph registered
    by then. `activities`: the team's own activities; one named like
    an activity a registration makes (`register_activities`) takes its place on this worker
    (a test's slow mailer, say). `store`: the store's engine to share (default: one opened
    from `DATABASE_URL` when the worker is built, and disposed when it stops)."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        activities: Sequence[Callable[..., Any]] = (),
        store: AsyncEngine | None = None,
    ) -> None:
        self._settings = settings or get_settings()
        import_agent_modules(self._settings)  # their `register(...)` calls run on import
        self._given = list(activities)
        self._store = store
        self._own_store: AsyncEngine | None = None
        agents = [entry.agent for entry in all_registered().values()]
        agents += [agent for agent in delegated_agents() if agent not in agents]
        # pydantic-ai's sandbox passthroughs and failure types, and each agent's activities
        self._nested: list[Plugin] = [PydanticAIPlugin(), *(AgentPlugin(a) for a in agents)]
        if all_registered_graphs():  # the `langgraph` extra is optional: imported only then
            from ag_ui_temporal.agents.graphs import GraphsPlugin

            self._nested.append(GraphsPlugin())
        if all_registered_openai_agents():  # so is the `openai-agents` extra
            from ag_ui_temporal.agents.openai_agents import openai_agents_plugin

            self._nested.append(openai_agents_plugin())
        if all_registered_adk_agents():  # and the `google-adk` extra
            from ag_ui_temporal.agents.adk_agents import adk_plugin

            self._nested.append(adk_plugin())
        super().__init__(
            "ag_ui_temporal.ThreadWorkerPlugin",
            data_converter=data_converter,  # on a replayer (a worker's: `configure_worker`)
            workflows=list(WORKFLOWS),
            workflow_runner=sandboxed,
            # a stopped run's model request and tools learn of it in a heartbeat's answer
            interceptors=[Heartbeats()],
        )

    def configure_worker(self, config: WorkerConfig) -> WorkerConfig:
        queue = config.get("task_queue")
        if queue != self._settings.task_queue:
            raise ValueError(
                f"a thread worker polls the threads' task queue {self._settings.task_queue!r} "
                f"(TASK_QUEUE, which the gateway starts threads on), not {queue!r}"
            )
        client = _with_converter(config["client"])
        config["client"] = client
        resources = WorkerResources(client, self._settings, self._engine())
        config["activities"] = self._activities(resources, config.get("activities", ()))
        # heartbeats reach Temporal that often (`heartbeats`): a cancel's answer with them
        config["default_heartbeat_throttle_interval"] = HEARTBEAT_EVERY
        config["max_heartbeat_throttle_interval"] = HEARTBEAT_EVERY
        config = super().configure_worker(config)
        for plugin in self._nested:
            config = plugin.configure_worker(config)
        preload_workflow_imports()
        return config

    def _engine(self) -> AsyncEngine:
        if self._store is not None:
            return self._store
        if self._own_store is None:
            self._own_store = open_engine(self._settings.store_url)  # connects at its first use
        return self._own_store

    def _activities(
        self, resources: WorkerResources, on_worker: Sequence[Callable[..., Any]]
    ) -> list[Callable[..., Any]]:
        """The library's, the registered ones (but those named like one given to the worker
        or the plugin), and those given to the worker and the plugin."""
        given = [*on_worker, *self._given]
        taken = {_activity_name(fn) for fn in given}
        registered = [fn for make in registered_activities() for fn in make(resources)]
        return [
            *_library_activities(resources),
            *(fn for fn in registered if _activity_name(fn) not in taken),
            *given,
        ]

    def configure_replayer(self, config: ReplayerConfig) -> ReplayerConfig:
        config = super().configure_replayer(config)
        for plugin in self._nested:
            config = plugin.configure_replayer(config)
        preload_workflow_imports()
        return config

    async def run_worker(self, worker: Worker, next: Callable[[Worker], Awaitable[None]]) -> None:
        for plugin in reversed(self._nested):
            next = functools.partial(plugin.run_worker, next=next)
        try:
            await next(worker)
        finally:
            if self._own_store is not None:
                await self._own_store.dispose()  # a worker built again reconnects

    @asynccontextmanager
    async def run_replayer(
        self,
        replayer: Replayer,
        histories: AsyncIterator[WorkflowHistory],
        next: Callable[
            [Replayer, AsyncIterator[WorkflowHistory]],
            AbstractAsyncContextManager[AsyncIterator[WorkflowReplayResult]],
        ],
    ) -> AsyncIterator[AsyncIterator[WorkflowReplayResult]]:
        for plugin in reversed(self._nested):
            next = functools.partial(plugin.run_replayer, next=next)
        async with next(replayer, histories) as results:
            yield results


def _library_activities(worker: WorkerResources) -> list[Callable[..., Any]]:
    """The thread's own: its archive, the audit trail, notifications; for producers'
    workflows: reach a thread and confirm what it settled; for threads: ask an owner whether
    it still takes an answer."""
    archive = ArchiveActivities(Transcript(worker.store))
    notifier = Notifier(worker.client, worker.settings, worker.store)
    signals = ThreadSignals(worker.client, worker.settings, notifier)
    audit = AuditActivities(AuditLog(worker.store, audit_keys(worker.settings)))
    return [
        archive.archive_messages,
        archive.archive_events,
        archive.archive_interrupts,
        signals.signal_thread,
        signals.confirm_settled,
        signals.ask_owner,
        notifier.start_notices,
        notifier.notify,
        audit.append,
    ]


def _activity_name(fn: Callable[..., Any]) -> str | None:
    return activity._Definition.must_from_callable(fn).name  # no public way to read it


def _with_converter(client: Client) -> Client:
    """`client`, or the same connection with the thread workers' converter (`plugin.
    data_converter`) when it has another: the worker reads and writes the threads' payloads
    with its client's converter, and a team's plain `Client.connect(...)` has temporalio's
    default, which cannot read what the gateway writes."""
    current = client.data_converter
    wanted = data_converter(current)
    if (wanted.payload_converter_class, wanted.payload_codec) == (
        current.payload_converter_class,
        current.payload_codec,
    ):
        return client
    config = client.config(active_config=True)
    config["data_converter"] = wanted
    config["plugins"] = []  # they configured it already: this config is what they made
    return Client(**config)
