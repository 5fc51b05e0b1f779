"""The worker's health endpoint and its graceful drain on SIGTERM.

- `GET /readyz`: 200 while the worker polls its task queue, is not draining and is live,
  else 503 (a loop that lagged while the worker was built is not yet ready).
- `GET /livez`: 200 while the event loop is responsive (its measured lag stays under
  `WORKER_LIVENESS_MAX_LAG`), else 503. A wedged loop cannot answer at all, which the
  probe's timeout counts as a failure too. Liveness is never "time since the last task":
  an idle worker (every thread waiting for days) is healthy.
- SIGTERM (or SIGINT): readiness flips to 503 first, then `worker.shutdown()` stops
  polling and lets running activities finish for up to `WORKER_GRACEFUL_SHUTDOWN_TIMEOUT`;
  the process then exits 0. Kubernetes' `terminationGracePeriodSeconds` must exceed
  that timeout (the manifests in deploy/k8s give it 15 s more). A worker still not stopped
  `STOP_GRACE` after its drain is left behind (the process exits 0 anyway), and a second
  signal leaves at once.

A tiny HTTP/1.1 server on asyncio streams: no framework on the worker's path.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import time
from collections.abc import AsyncIterator, Callable, Iterator

from temporalio.worker import Worker

log = logging.getLogger("ag-ui-temporal.worker")

_REASONS = {200: "OK", 404: "Not Found", 503: "Service Unavailable"}


class WorkerHealth:
    def __init__(self, max_lag: float, tick: float = 0.5) -> None:
        self.max_lag = max_lag
        self.tick = tick
        self.lag = 0.0
        self.draining = False
        self.worker: Worker | None = None

    def ready(self) -> bool:
        running = self.worker is not None and self.worker.is_running
        return running and not self.draining and self.live()

    def live(self) -> bool:
        return self.lag < self.max_lag

    async def measure_lag(self) -> None:
        """How late the loop wakes a sleeper: the loop's responsiveness."""
        while True:
            start = time.monotonic()
            await asyncio.sleep(self.tick)
            self.lag = max(0.0, time.monotonic() - start - self.tick)

    def answer(self, path: str) -> tuple[int, dict[str, object]]:
        body: dict[str, object] = {"draining": self.draining, "loop_lag_s": round(self.lag, 4)}
        if path == "/readyz":
            return (200 if self.ready() else 503), {"ready": self.ready(), **body}
        if path in ("/livez", "/healthz"):
            return (200 if self.live() else 503), {"live": self.live(), **body}
        return 404, {"error": "not found"}

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=5)
            parts = request.split(b" ", 2)
            path = parts[1].decode("latin-1").split("?", 1)[0] if len(parts) > 1 else "/"
            status, body = self.answer(path)
            payload = json.dumps(body).encode()
            head = (
                f"HTTP/1.1 {status} {_REASONS[status]}\r\ncontent-type: application/json\r\n"
                f"content-length: {len(payload)}\r\nconnection: close\r\n\r\n"
            )
            writer.write(head.encode() + payload)
            await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    @contextlib.asynccontextmanager
    async def serving(self, host: str, port: int | None) -> AsyncIterator[None]:
        """Measure the loop's lag and, when a port is given, answer the probes on it."""
        ticker = asyncio.create_task(self.measure_lag())
        server = await asyncio.start_server(self.handle, host, port) if port else None
        if server:
            log.info("worker health on http://%s:%s (/readyz, /livez)", host, port)
        try:
            yield
        finally:
            ticker.cancel()
            if server:
                server.close()
                await server.wait_closed()


STOP_GRACE = 5.0
"""Seconds a stopping worker gets beyond its drain (after which Temporal cancels the activities
still running) for those to report and for the worker to finish; then its process stops
waiting for it. A sync activity ignores cancellation and Temporal would wait for it for good."""

SIGNALS = (signal.SIGTERM, signal.SIGINT)


@contextlib.contextmanager
def stop_on_signals(
    stop: asyncio.Event,
    signals: tuple[signal.Signals, ...] = SIGNALS,
    on_force: Callable[[], None] | None = None,
) -> Iterator[None]:
    """SIGTERM or SIGINT (`signals`) sets `stop`: the process stops gracefully. A second one
    calls `on_force`, then raises KeyboardInterrupt out of the event loop, and `cli.main`
    leaves at once, without waiting for what is still stopping."""
    loop = asyncio.get_running_loop()

    def on_signal() -> None:
        if stop.is_set():
            log.warning("a second signal: leaving without waiting for the rest to stop")
            if on_force is not None:
                on_force()
            raise KeyboardInterrupt  # the loop lets it out of `run`: a forced exit
        stop.set()

    for sig in signals:
        loop.add_signal_handler(sig, on_signal)
    try:
        yield
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)


async def run_until_stopped(
    worker: Worker,
    stop: asyncio.Event,
    drain: float,
    health: WorkerHealth | None = None,
    *,
    grace: float = STOP_GRACE,
) -> None:
    """Run the worker until `stop` is set; then stop being ready and drain it (running
    activities get `drain` seconds). Returns once it stopped, or `grace` after the drain."""
    if health is not None:
        health.worker = worker
    running = asyncio.create_task(worker.run())
    stopping = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({running, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not running.done():
            if health is not None:
                health.draining = True  # readiness flips before anything else happens
            log.info("stopping: draining (running activities may finish)")
            shutdown = asyncio.create_task(worker.shutdown())
            await asyncio.wait({running}, timeout=drain + grace)
            if not running.done():
                log.warning("the worker is still stopping %s s after its drain: left", grace)
                return
            await shutdown
        await running  # the worker's own failure, if it failed
        log.info("worker stopped")
    finally:
        stopping.cancel()
