/**
 * `submitExpense`, the assistant's tool that starts an expense approval chain.
 *
 * Mirrors `SUBMIT_EXPENSE` in `ag_ui_temporal/demo/tools.py`, the source of truth. The
 * requester approves the call (a TanStack `tool-approval` item when this
 * definition is registered); the expense then goes through the approval
 * chain (manager, then finance for amounts over 1000), and the outcome comes
 * back to the same thread as a message.
 *
 *   useChat({ connection, tools: [submitExpense] })
 *   interrupt.kind === 'tool-approval' && interrupt.toolName === 'submitExpense'
 *   interrupt.resolveInterrupt(true)
 *
 * `tests/gateway/test_tool_definitions_drift.py` fails on any drift from the Python schema.
 */
import { toolDefinition } from '@tanstack/ai'
import { z } from 'zod'

export const submitExpenseInput = z.strictObject({
  amount: z.number(),
  currency: z.string(),
  description: z.string(),
})

export type SubmitExpenseInput = z.infer<typeof submitExpenseInput>

export const submitExpense = toolDefinition({
  name: 'submitExpense',
  description: 'Submit an expense for reimbursement; it then goes through the approval chain.',
  inputSchema: submitExpenseInput,
  needsApproval: true,
})
