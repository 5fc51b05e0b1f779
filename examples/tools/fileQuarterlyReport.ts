/**
 * `fileQuarterlyReport`, the assistant's tool whose arguments a person fills in.
 *
 * Mirrors `FILE_QUARTERLY_REPORT` in `ag_ui_temporal/demo/tools.py`, the source of
 * truth; `tests/gateway/test_tool_definitions_drift.py` fails on any drift. It needs
 * no approval: the server asks for its arguments with an `input_required`
 * interrupt whose `responseSchema` is this form, which a TanStack client shows
 * as a `generic` item. Validate the answer with `quarterlyReportForm` before
 * `interrupt.resolveInterrupt(values)`.
 */
import { toolDefinition } from '@tanstack/ai'
import { z } from 'zod'

export const quarterlyReportForm = z.strictObject({
  quarter: z.enum(['Q1', 'Q2', 'Q3', 'Q4']),
  year: z.int().min(2000),
  revenue: z.number(),
})

export type QuarterlyReport = z.infer<typeof quarterlyReportForm>

export const fileQuarterlyReport = toolDefinition({
  name: 'fileQuarterlyReport',
  description: 'File the quarterly report; a person fills in the figures.',
  inputSchema: quarterlyReportForm,
})
