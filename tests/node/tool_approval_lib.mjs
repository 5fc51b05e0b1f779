// Shared by tool_approval_defs.mjs and tool_approval_chat.mjs: loads the
// published tool definitions (examples/tools/*.ts) and a few test-only
// variants, and turns TanStack's bound interrupt items into plain JSON.
import { register } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { toolDefinition } from '@tanstack/ai'
import { z } from 'zod-v4'

register('./tool_approval_hooks.mjs', import.meta.url)

export { captureConsole, describeItem, finish, plain, readJob, sleep } from './harness.mjs'

export const TOOLS_DIR = fileURLToPath(new URL('../../examples/tools/', import.meta.url))
export const TOOLS_INDEX = `${TOOLS_DIR}index.ts`

/** The published module (index.ts), as loaded by a front end. */
export const published = () => import(TOOLS_INDEX)

export const isToolDefinition = (value) =>
  value !== null && typeof value === 'object' && value.__toolSide === 'definition'

/** Test-only definitions: drifted copies of the published ones, and approval payloads. */
export const fixtures = {
  // sendEmail with z.email(): zod then emits its own `pattern` -> other hashes.
  sendEmailDrifted: toolDefinition({
    name: 'sendEmail',
    description: "Send an email on the user's behalf.",
    inputSchema: z.strictObject({ to: z.email(), subject: z.string(), body: z.string() }),
    needsApproval: true,
  }),
  // sendEmail as TanStack's tool-approval guide writes a tool: z.object, z.string().email().
  sendEmailGuide: toolDefinition({
    name: 'sendEmail',
    description: 'Send an email',
    inputSchema: z.object({ to: z.string().email(), subject: z.string(), body: z.string() }),
    needsApproval: true,
  }),
  // sendEmail as an agent registered without edits asks it: no inputSchema, no editedArgs.
  sendEmailNoEdits: toolDefinition({
    name: 'sendEmail',
    description: "Send an email on the user's behalf.",
    needsApproval: true,
  }),
  // A rejection must say why; an approval carries nothing.
  archiveThread: toolDefinition({
    name: 'archiveThread',
    description: 'Archive a thread.',
    inputSchema: z.strictObject({ threadId: z.string() }),
    needsApproval: true,
    approvalSchema: { reject: z.strictObject({ reason: z.string() }) },
  }),
  // One payload schema for both decisions.
  tagThread: toolDefinition({
    name: 'tagThread',
    description: 'Tag a thread.',
    inputSchema: z.strictObject({ tag: z.string() }),
    needsApproval: true,
    approvalSchema: z.strictObject({ note: z.string() }),
  }),
}

/**
 * Tools by spec: "published:<toolName>" (a definition exported by index.ts),
 * "published:*" (index.ts's `assistantTools`), "fixture:<key>",
 * "fixture:sendEmailNoApproval" (the published sendEmail without needsApproval), or
 * "module:<path of a .ts file>" (the `approvalTools` of a file `GET /agents/{agent}/tools.ts`
 * wrote).
 */
export async function tools(specs) {
  const module = await published()
  const byName = new Map(Object.values(module).filter(isToolDefinition).map((t) => [t.name, t]))
  const out = []
  for (const spec of specs) {
    const source = spec.slice(0, spec.indexOf(':'))
    const key = spec.slice(spec.indexOf(':') + 1)
    if (source === 'module') out.push(...(await import(pathToFileURL(key).href)).approvalTools)
    else if (source === 'published' && key === '*') out.push(...module.assistantTools)
    else if (source === 'published' && byName.has(key)) out.push(byName.get(key))
    else if (source === 'fixture' && key === 'sendEmailNoApproval') {
      const { needsApproval, ...rest } = byName.get('sendEmail')
      out.push({ ...rest, needsApproval: false })
    } else if (source === 'fixture' && fixtures[key]) out.push(fixtures[key])
    else throw new Error(`unknown tool spec: ${spec}`)
  }
  return out
}

/**
 * Apply one decision to a bound item, the way an app would:
 *   {approve: bool, editedArgs?, payload?}  tool-approval: resolveInterrupt(approve, {editedArgs, payload})
 *                                           generic: resolveInterrupt({approved, editedArgs?, payload?})
 *   {cancel: true}                          item.cancel()
 *   {raw: payload}                          item.resolveInterrupt(payload) (generic items only)
 */
export function decide(item, decision) {
  if (decision.cancel) return item.cancel()
  if ('raw' in decision) return item.resolveInterrupt(decision.raw)
  const options = {
    ...(decision.editedArgs !== undefined ? { editedArgs: decision.editedArgs } : {}),
    ...(decision.payload !== undefined ? { payload: decision.payload } : {}),
  }
  if (item.kind === 'tool-approval') return item.resolveInterrupt(decision.approve, options)
  return item.resolveInterrupt({ approved: decision.approve, ...options })
}

