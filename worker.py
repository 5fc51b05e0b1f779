"""The Temporal worker process: thread workflows, approval chains, notifications, tool
activities, the producers' activity."""

from __future__ import annotations

import asyncio
import importlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic_ai.durable_exec.temporal import AgentPlugin, PydanticAIPlugin
from temporalio.client import Client
from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
from temporalio.worker import Worker, WorkerDeploymentConfig
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from ag_ui_temporal.agents.registry import all_registered_graphs
from ag_ui_temporal.audit import AuditActivities, keep_retention
from ag_ui_temporal.demo.activities import ToolActivities
from ag_ui_temporal.demo.expenses import ExpenseActivities
from ag_ui_temporal.demo.serving import serve_agents
from ag_ui_temporal.heartbeats import HEARTBEAT_EVERY, Heartbeats
from ag_ui_temporal.notify.activities import Notifier
from ag_ui_temporal.observability.worker_metrics import metrics_runtime
from ag_ui_temporal.plugin import PASSTHROUGH_MODULES
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.store import AuditLog, Outbox, Transcript, audit_keys, open_engine
from ag_ui_temporal.temporal_client import connect_unless_stopped
from ag_ui_temporal.worker_health import WorkerHealth, run_until_stopped
from ag_ui_temporal.workflows.chains.workflow import ApprovalChain
from ag_ui_temporal.workflows.notices import AguiNotification
from ag_ui_temporal.workflows.producers.thread_signals import ThreadSignals
from ag_ui_temporal.workflows.thread.archive import ArchiveActivities
from ag_ui_temporal.workflows.thread.workflow import ThreadWorkflow

# Modules that only define data (pydantic models, tool schemas) are shared with
# the sandbox instead of re-imported for every workflow it loads: it halves the
# cost of starting or replaying a thread. Workflow logic stays sandboxed, except
# `workflows.schema`: pure functions whose cache of checked schemas must be shared.
DATA_MODULES = (
    *PASSTHROUGH_MODULES,  # what a producer's workflow shares too
    # the pydantic-ai agents: the worker's own objects, built outside any workflow
    "ag_ui_temporal.agents",
    "ag_ui_temporal.workflows.thread.state",
    "ag_ui_temporal.workflows.thread.tool_calls",
    "ag_ui_temporal.demo.tools",
    "ag_ui_temporal.workflows.chains.definitions",
    "ag_ui_temporal.workflows.chains._state",
)
# OpenTelemetry (and our tracing interceptor) must be the process's own modules in the
# sandbox, or workflow spans would not reach the process's tracer provider.
TRACING_MODULES = ("opentelemetry", "ag_ui_temporal.observability")
# Modules a workflow task would otherwise import for the first time, imported when the worker
# is built instead. A passthrough module missing from the process is imported by the task that
# first asks for it, inside the task's 2 s deadlock timeout: the MCP stack alone takes 1-2 s, so
# that task failed as a potential deadlock (TMPRL1101) and was retried. They are passed through
# (as pydantic-ai's plugin also does) so the sandbox takes the worker's copy, never a new one.
PRELOADED_MODULES = (
    # pydantic-ai's durable layer sorts the toolsets a run is given (the client's frontend
    # tools, `RunAgentInput.tools`) with `from pydantic_ai.mcp import MCPToolset`, in the
    # workflow, whether or not an agent uses an MCP server; it loads fastmcp and the `mcp` SDK.
    # Passed through: `isinstance` against the class the agents' toolsets were built with, and
    # fastmcp resolves its config directory (`Path.expanduser`) at import, which the sandbox
    # refuses.
    "pydantic_ai.mcp",
)
SANDBOX = SandboxedWorkflowRunner(
    restrictions=SandboxRestrictions.default.with_passthrough_modules(
        *DATA_MODULES, *TRACING_MODULES, *PRELOADED_MODULES
    )
)


def preload_workflow_imports() -> None:
    """Import `PRELOADED_MODULES` in the worker's process, before it polls (see there)."""
    for name in PRELOADED_MODULES:
        importlib.import_module(name)


def build_worker(
    client: Client,
    settings: Settings,
    executor: ThreadPoolExecutor,
    tools: ToolActivities | None = None,
) -> Worker:
    tools = tools or ToolActivities(Outbox(open_engine(settings.store_url)))
    archive = ArchiveActivities(Transcript(tools.outbox.engine))  # one database, one pool
    agents = serve_agents(settings)
    notifier = Notifier(client, settings, tools.outbox.engine)
    audit = AuditActivities(AuditLog(tools.outbox.engine, audit_keys(settings)))
    preload_workflow_imports()
    graph_plugins = _langgraph()
    return Worker(
        client,
        task_queue=settings.task_queue,
        workflows=[ThreadWorkflow, ApprovalChain, AguiNotification],
        activities=[
            tools.send_email,
            tools.file_quarterly_report,
            tools.delete_drafts,
            archive.archive_messages,
            archive.archive_events,
            archive.archive_interrupts,
            ExpenseActivities(client, settings).submit_expense,
            *_producer_activities(ThreadSignals(client, settings, notifier)),
            notifier.start_notices,
            notifier.notify,
            audit.append,
        ],
        activity_executor=executor,
        workflow_runner=SANDBOX,
        max_cached_workflows=settings.worker_max_cached_workflows,
        graceful_shutdown_timeout=settings.worker_graceful_shutdown_timeout,
        deployment_config=deployment_config(settings),
        # a stopped run's model request and tools learn of it in a heartbeat's answer
        interceptors=[Heartbeats()],
        default_heartbeat_throttle_interval=HEARTBEAT_EVERY,
        max_heartbeat_throttle_interval=HEARTBEAT_EVERY,
        # pydantic-ai's sandbox passthroughs and failure types, and each agent's activities
        plugins=[PydanticAIPlugin(), *(AgentPlugin(agent) for agent in agents), *graph_plugins],
    )


def _langgraph() -> list[Any]:
    """The plugin of the LangGraph graphs this process registered (their nodes' activities,
    LangGraph's passthroughs); none without graphs (the `langgraph` extra is optional)."""
    if not all_registered_graphs():
        return []
    from ag_ui_temporal.agents.graphs import GraphsPlugin

    return [GraphsPlugin()]


def _retention(settings: Settings, audit: AuditLog) -> asyncio.Task[None] | None:
    """`AUDIT_RETENTION`, kept by every worker replica (unset: records are kept forever)."""
    if settings.audit_retention is None:
        return None
    return asyncio.create_task(keep_retention(audit, settings.audit_retention))


def _producer_activities(signals: ThreadSignals) -> list[Any]:
    """For producers' workflows: reach a thread, and confirm what a thread settled; for
    threads: ask an owner whether it still takes an answer."""
    return [signals.signal_thread, signals.confirm_settled, signals.ask_owner]


def deployment_config(settings: Settings) -> WorkerDeploymentConfig | None:
    """Worker Versioning, on when TEMPORAL_DEPLOYMENT_NAME and _WORKER_BUILD_ID are set.

    Threads wait for days and never complete (they continue as new), so they must not
    be PINNED to the build that started them: that build could never drain. Every
    workflow here is AUTO_UPGRADE: it moves to the current version at its next task,
    and changes stay replay-safe through `workflow.patched` and the replayed histories.
    """
    if settings.temporal_deployment_name is None or settings.temporal_worker_build_id is None:
        return None
    return WorkerDeploymentConfig(
        version=WorkerDeploymentVersion(
            deployment_name=settings.temporal_deployment_name,
            build_id=settings.temporal_worker_build_id,
        ),
        use_worker_versioning=True,
        default_versioning_behavior=VersioningBehavior.AUTO_UPGRADE,
    )


async def run_worker(settings: Settings, stop: asyncio.Event) -> None:
    """The worker and its health endpoint until `stop` is set, then its drain.

    Its agents first (`AGENT_MODULES`, `LLM_MODEL`): one that cannot be served is said
    before anything connects or listens."""
    serve_agents(settings)
    health = WorkerHealth(settings.worker_liveness_max_lag.total_seconds())
    async with health.serving(settings.worker_health_host, settings.worker_health_port):
        runtime = metrics_runtime(settings)
        client = await connect_unless_stopped(settings, stop, runtime=runtime)
        if client is None:
            return
        store = open_engine(settings.store_url)
        executor = ThreadPoolExecutor(max_workers=8)
        retention: asyncio.Task[None] | None = None
        try:
            worker = build_worker(client, settings, executor, ToolActivities(Outbox(store)))
            drain = settings.worker_graceful_shutdown_timeout.total_seconds()
            retention = _retention(settings, AuditLog(store, audit_keys(settings)))
            await run_until_stopped(worker, stop, drain, health)
        finally:
            if retention is not None:
                retention.cancel()
            # never waits: a sync activity still running after the drain is left behind
            executor.shutdown(wait=False, cancel_futures=True)
            await store.dispose()
