/**
 * `sendEmail`, the assistant's tool that needs a person's approval.
 *
 * Mirrors `SEND_EMAIL` in `ag_ui_temporal/demo/tools.py`, the source of truth. Register
 * it with TanStack AI's client so the server's approval interrupts arrive as
 * typed `tool-approval` items:
 *
 *   useChat({ connection, tools: [sendEmail] })
 *   interrupt.kind === 'tool-approval' && interrupt.toolName === 'sendEmail'
 *   interrupt.resolveInterrupt(true)                               // approve
 *   interrupt.resolveInterrupt(false)                              // reject
 *   interrupt.resolveInterrupt(true, { editedArgs: { to, subject, body } })
 *
 * The client only does so when the JSON Schema zod produces for `inputSchema`
 * hashes like the server's, so this must stay exactly the Python schema;
 * `tests/gateway/test_tool_definitions_drift.py` fails on any drift. Without it (or
 * with a different schema) the same interrupts are plain `generic` items.
 */
import { toolDefinition } from '@tanstack/ai'
import { z } from 'zod'

/**
 * JSON Schema `format: "email"`, checked as the server checks it (Python
 * `jsonschema`'s format checker: the address contains "@"). `z.email()` would
 * also emit zod's own `pattern`, which the Python schema does not have.
 */
export const emailAddress = z
  .string()
  .refine((value) => value.includes('@'), { message: 'Invalid email address' })
  .meta({ format: 'email' })

export const sendEmailInput = z.strictObject({
  to: emailAddress,
  subject: z.string(),
  body: z.string(),
})

export type SendEmailInput = z.infer<typeof sendEmailInput>

export const sendEmail = toolDefinition({
  name: 'sendEmail',
  description: "Send an email on the user's behalf.",
  inputSchema: sendEmailInput,
  needsApproval: true,
})
