"""The worker's Prometheus endpoint: Temporal's own SDK metrics and the thread
workflow's `agui_interrupts_opened` / `agui_interrupts_settled` counters."""

from __future__ import annotations

from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

from ag_ui_temporal.settings import Settings


def metrics_runtime(settings: Settings) -> Runtime | None:
    """A Temporal runtime exporting on `WORKER_METRICS_PORT` (unset: none, the default runtime).

    A runtime is process-wide machinery; only the worker's client is given this one."""
    if settings.worker_metrics_port is None:
        return None
    address = f"{settings.worker_metrics_host}:{settings.worker_metrics_port}"
    return Runtime(
        telemetry=TelemetryConfig(
            metrics=PrometheusConfig(bind_address=address, counters_total_suffix=True)
        )
    )
