"""`ag-ui-temporal worker` and `ag-ui-temporal gateway`: one process of the stack each
(the image's two entry points), the gateway's refusal to start unsafely and the worker's
without an audit key."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from dataclasses import replace

import uvicorn

from ag_ui_temporal.settings import Settings

log = logging.getLogger("ag-ui-temporal")

STREAMS_DRAIN = 5
"""Seconds a stopping gateway gives its open event streams (a stream lasts as long as its
run) before it closes their connections: the app hears a disconnect, and the client
re-attaches with `Last-Event-ID`. A request still running as long again is cancelled."""


async def serve_worker(settings: Settings) -> None:
    """The Temporal worker; SIGTERM/SIGINT drain it (a rollout's graceful stop)."""
    from ag_ui_temporal.cli.dev_server import refuse_taken, worker_ports
    from ag_ui_temporal.worker import run_worker
    from ag_ui_temporal.worker_health import stop_on_signals

    refuse_taken("worker", worker_ports(settings))
    stop = asyncio.Event()
    with stop_on_signals(stop):
        await run_worker(settings, stop)


async def serve_gateway_process(settings: Settings) -> None:
    """The AG-UI gateway until SIGTERM/SIGINT (a second one leaves at once)."""
    from ag_ui_temporal.cli.dev_server import ports, refuse_taken
    from ag_ui_temporal.worker_health import stop_on_signals

    # GATEWAY_PORT, before connecting (the process has no --gateway-port: `dev` has)
    refuse_taken("gateway", [replace(p, option=None) for p in ports(settings, embedded=False)])
    stop = asyncio.Event()
    with stop_on_signals(stop):
        await serve_gateway(settings, stop)


class _Stoppable(uvicorn.Server):
    """uvicorn leaving the process's signals to its owner, who stops it with `should_exit`."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve_gateway(settings: Settings, stop: asyncio.Event) -> None:
    """The AG-UI gateway under uvicorn until `stop` is set, then its drain (`STREAMS_DRAIN`).

    Its agents (`AGENT_MODULES`, `LLM_MODEL`), then Temporal, before uvicorn starts: either
    failing is said in a line of its own (uvicorn would log a traceback, and exit)."""
    from ag_ui_temporal.agents.catalog import import_agent_modules
    from ag_ui_temporal.gateway.main import create_app
    from ag_ui_temporal.gateway.server import http_protocol
    from ag_ui_temporal.temporal_client import connect_unless_stopped

    import_agent_modules(settings)  # the agents the workers run: what `/agents` lists
    client = await connect_unless_stopped(settings, stop)
    if client is None:
        return

    config = uvicorn.Config(
        create_app(settings, client),
        host=settings.gateway_host,
        port=settings.gateway_port,
        http=http_protocol(settings),  # request heads bounded in size and time
        log_config=None,  # access and error logs through our (redacting) root handler
        # Modes that trust the caller check the socket's own peer: never let
        # X-Forwarded-For (FORWARDED_ALLOW_IPS) rewrite it.
        proxy_headers=not settings.trusts_callers,
        timeout_graceful_shutdown=2 * STREAMS_DRAIN,
    )
    server = _Stoppable(config)
    serving = asyncio.create_task(server.serve())
    stopping = asyncio.create_task(stop.wait())
    await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
    stopping.cancel()
    server.should_exit = True
    if not (await asyncio.wait({serving}, timeout=STREAMS_DRAIN))[0]:
        for connection in list(server.server_state.connections):
            connection.transport.close()  # the stream hears a disconnect and ends quietly
    await serving


def refuse_unsafe(settings: Settings) -> None:
    """Before anything starts: a gateway that would serve unsafely exits with the reason."""
    from ag_ui_temporal.gateway.deps import GatewayRefused, startup_authenticator

    try:
        startup_authenticator(settings)
    except GatewayRefused as err:
        raise SystemExit(f"ag-ui-temporal: the gateway will not start: {err}") from None


def refuse_unkeyed(settings: Settings) -> None:
    """Before anything starts (nothing read or made yet): a worker without an audit key it
    may use exits with the reason (`store.audit_keys`), so a deployment never keeps its
    trail unkeyed unawares."""
    from ag_ui_temporal.store import AuditKeyMissing
    from ag_ui_temporal.store.audit_keys import key_source

    try:
        source = key_source(settings)
    except AuditKeyMissing as err:
        raise SystemExit(f"ag-ui-temporal: the worker will not start: {err}") from None
    log.info("the audit trail is keyed with %s", source)
