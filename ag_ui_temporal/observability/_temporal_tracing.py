"""Temporal's OpenTelemetry interceptor, with each update traced under its own request.

The stock interceptor parents every update handler on the context the workflow was
*started* with. A thread lives for months and each run is an update, so every run
would land in the trace of the thread's first POST. Here an update's spans, and the
activities its handler starts, join the trace of the request that sent the update
(the stock behaviour stays for everything else).
"""

from __future__ import annotations

from typing import Any

import opentelemetry.trace
from opentelemetry.context import Context
from temporalio.contrib.opentelemetry import TracingInterceptor, TracingWorkflowInboundInterceptor
from temporalio.contrib.opentelemetry._context import attached_context
from temporalio.worker import HandleUpdateInput, WorkflowInterceptorClassInput

SERVER = opentelemetry.trace.SpanKind.SERVER


class RunTracingInterceptor(TracingInterceptor):
    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[TracingWorkflowInboundInterceptor]:
        super().workflow_interceptor_class(input)  # registers the span extern function
        return RunTracingWorkflowInbound


class RunTracingWorkflowInbound(TracingWorkflowInboundInterceptor):
    def _update_context(self, input: HandleUpdateInput) -> Context | None:
        header = input.headers.get(self.header_key)
        carrier = self.payload_converter.from_payloads([header])[0] if header else None
        if not carrier:
            return None
        return self._set_on_context(self.text_map_propagator.extract(carrier))

    def handle_update_validator(self, input: HandleUpdateInput) -> None:
        context = self._update_context(input)
        if context is None:
            return super().handle_update_validator(input)
        with attached_context(context):
            self._completed_span(f"ValidateUpdate:{input.update}", kind=SERVER)
            self.next.handle_update_validator(input)

    async def handle_update_handler(self, input: HandleUpdateInput) -> Any:
        context = self._update_context(input)
        if context is None:
            return await super().handle_update_handler(input)
        with attached_context(context):
            self._completed_span(f"HandleUpdate:{input.update}", kind=SERVER)
            return await self.next.handle_update_handler(input)
