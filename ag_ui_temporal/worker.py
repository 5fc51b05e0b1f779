"""The Temporal worker process (`ag-ui-temporal worker`): a worker on the threads' task
queue with `ThreadWorkerPlugin`, which brings the threads, approval chains, notifications,
the producers' activities and the agents `AGENT_MODULES` register with their activities."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from temporalio.client import Client
from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
from temporalio.service import RPCError
from temporalio.worker import Worker, WorkerDeploymentConfig

from ag_ui_temporal.agents.catalog import import_agent_modules
from ag_ui_temporal.audit import keep_retention
from ag_ui_temporal.observability.worker_metrics import metrics_runtime
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.store import AuditLog, audit_keys, open_engine
from ag_ui_temporal.temporal_client import connect_unless_stopped
from ag_ui_temporal.worker_health import WorkerHealth, run_until_stopped
from ag_ui_temporal.worker_plugin import ThreadWorkerPlugin, preload_workflow_imports
from ag_ui_temporal.workflows.patches import BEFORE_BASELINE

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

log = logging.getLogger("ag-ui-temporal")

PARKED_QUERY = "ExecutionStatus = 'Running' AND TemporalChangeVersion IN ({})".format(
    ", ".join(f"'{patch_id}'" for patch_id in sorted(BEFORE_BASELINE))
)
"""The open workflows whose run recorded a patch marker of the code before 0.1.0, which
0.1.0 squashed (`patches.BEFORE_BASELINE`): their histories do not replay under it."""


def parked(count: int) -> str:
    """The words for `count` such workflows, as `dev` and the worker say them."""
    workflows = "workflow" if count == 1 else "workflows"
    return (
        f"{count} {workflows} parked before ag-ui-temporal 0.1.0, which this version cannot resume"
    )


async def parked_before_baseline(client: Client) -> int:
    """How many workflows of the client's namespace are parked under code before 0.1.0 (0
    also when the server keeps no visibility to ask, as the time-skipping test server)."""
    try:
        return (await client.count_workflows(PARKED_QUERY)).count
    except RPCError as err:
        log.debug("workflows parked before 0.1.0 not counted: %s", err)
        return 0


async def say_parked(client: Client, settings: Settings) -> None:
    """One warning line when the namespace holds workflows parked before 0.1.0: the worker
    leaves them alone (their tasks fail on replay until someone ends them)."""
    if count := await parked_before_baseline(client):
        log.warning(
            "namespace %s at %s holds %s: they are left alone; finish or terminate them "
            "(docs/operations.md, Versioning workflow code)",
            settings.temporal_namespace,
            settings.temporal_address,
            parked(count),
        )


def build_worker(
    client: Client,
    settings: Settings,
    executor: ThreadPoolExecutor,
    activities: Sequence[Callable[..., Any]] = (),
    *,
    store: AsyncEngine | None = None,
) -> Worker:
    """The thread worker of `settings`: `ThreadWorkerPlugin(settings, activities=...,
    store=...)` on the threads' task queue, with the process's executor, cache and
    versioning."""
    return Worker(
        client,
        task_queue=settings.task_queue,
        activity_executor=executor,
        max_cached_workflows=settings.worker_max_cached_workflows,
        sticky_queue_schedule_to_start_timeout=settings.worker_sticky_queue_timeout,
        graceful_shutdown_timeout=settings.worker_graceful_shutdown_timeout,
        deployment_config=deployment_config(settings),
        plugins=[ThreadWorkerPlugin(settings, activities=activities, store=store)],
    )


def _retention(settings: Settings, audit: AuditLog) -> asyncio.Task[None] | None:
    """`AUDIT_RETENTION`, kept by every worker replica (unset: records are kept forever)."""
    if settings.audit_retention is None:
        return None
    return asyncio.create_task(keep_retention(audit, settings.audit_retention))


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
    before anything connects or listens. The modules its workflows need are imported then
    too: building the worker later blocks the loop, and `/livez` would count the MCP stack's
    import (seconds on a busy machine) as a wedged loop."""
    import_agent_modules(settings)
    preload_workflow_imports()
    health = WorkerHealth(settings.worker_liveness_max_lag.total_seconds())
    async with health.serving(settings.worker_health_host, settings.worker_health_port):
        runtime = metrics_runtime(settings)
        client = await connect_unless_stopped(settings, stop, runtime=runtime)
        if client is None:
            return
        # beside the start, not before it: a slow visibility query delays nothing
        counting = asyncio.create_task(say_parked(client, settings))
        store = open_engine(settings.store_url)
        executor = ThreadPoolExecutor(max_workers=8)
        retention: asyncio.Task[None] | None = None
        try:
            worker = build_worker(client, settings, executor, store=store)
            drain = settings.worker_graceful_shutdown_timeout.total_seconds()
            retention = _retention(settings, AuditLog(store, audit_keys(settings)))
            await run_until_stopped(worker, stop, drain, health)
        finally:
            counting.cancel()
            if retention is not None:
                retention.cancel()
            # never waits: a sync activity still running after the drain is left behind
            executor.shutdown(wait=False, cancel_futures=True)
            await store.dispose()
