"""Logs, traces and metrics for every process, with no secret in any of them.

- `observability.logs`: JSON (or text) logs carrying the request's thread, run,
  interrupt ids and principal, with secrets redacted.
- `observability.tracing`: OpenTelemetry across gateway -> Temporal -> worker (off by default).
- `observability.worker_metrics`: the worker's Prometheus endpoint (Temporal's own metrics
  and the thread workflow's `agui_interrupts_*` counters).
"""
