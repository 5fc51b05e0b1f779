"""`ag-ui-temporal worker` and `ag-ui-temporal gateway`: one process of the stack each
(the image's two entry points), and the gateway's refusal to start unsafely."""

from __future__ import annotations

import uvicorn

from settings import Settings


async def serve_worker(settings: Settings) -> None:
    """The Temporal worker; SIGTERM/SIGINT drain it (a rollout's graceful stop)."""
    from worker import run_worker

    await run_worker(settings, drain_on_signals=True)


async def serve_gateway(settings: Settings) -> None:
    """The AG-UI gateway under uvicorn, until Ctrl-C."""
    from gateway.main import create_app
    from gateway.server import http_protocol

    config = uvicorn.Config(
        create_app(settings),
        host=settings.gateway_host,
        port=settings.gateway_port,
        http=http_protocol(settings),  # request heads bounded in size and time
        log_config=None,  # access and error logs through our (redacting) root handler
        # Modes that trust the caller check the socket's own peer: never let
        # X-Forwarded-For (FORWARDED_ALLOW_IPS) rewrite it.
        proxy_headers=not settings.trusts_callers,
    )
    await uvicorn.Server(config).serve()


def refuse_unsafe(settings: Settings) -> None:
    """Before anything starts: a gateway that would serve unsafely exits with the reason."""
    from gateway.deps import GatewayRefused, startup_authenticator

    try:
        startup_authenticator(settings)
    except GatewayRefused as err:
        raise SystemExit(f"ag-ui-temporal: the gateway will not start: {err}") from None
