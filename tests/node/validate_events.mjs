// Validate AG-UI event streams against @ag-ui/core 1.0.0's zod EventSchema,
// strictly (unknown keys, nulls on optional fields), against the ordering
// rules, and through @ag-ui/client's own enforceEvents + verifyEvents stages;
// and as @ag-ui/client 0.0.59 (what CopilotKit 1.74 pins) reads them: its
// core's EventSchemas, then its transformChunks + verifyEvents.
//
//   node validate_events.mjs < input.json > result.json
//
// Input:  {streams: [[event, ...], ...], requireTerminal?: bool (default true)}
//         Each inner array is one SSE response's events, in order.
// Output: {ok: bool, problems: [{stream, index, problem, source}]}
//         source: "schema"  EventSchema.safeParse issue
//                 "strict"  unknown key / null on an optional field
//                 "order"   this script's ordering rules
//                 "client"  @ag-ui/client enforceEvents/verifyEvents error or
//                           warning (what HttpAgent would do with the stream)
//                 "0.0.59"  what HttpAgent 0.0.59 refuses (its schemas, its verifier)
//         index is the event's position in its stream (-1: whole stream).
import { enforceEvents, transformChunks, verifyEvents } from '@ag-ui/client'
import { EventSchema } from '@ag-ui/core/schemas'
import {
  transformChunks as transformChunks0059,
  verifyEvents as verifyEvents0059,
} from 'ag-ui-client-0059'
import { EventSchemas as EventSchemas0059 } from 'ag-ui-core-0059'
import { from, lastValueFrom, tap, toArray } from 'rxjs'
import { errorInfo, finish, readJob } from './harness.mjs'

// ---- strict key/null walk (mirrors @ag-ui/client's enforce-stage stripper) ----
const def = (s) => s?._zod?.def ?? {}

function unwrap(schema) {
  let s = schema
  for (;;) {
    const d = def(s)
    if (['optional', 'nullable', 'default', 'readonly', 'catch', 'prefault', 'nonoptional'].includes(d.type)) s = d.innerType
    else if (d.type === 'pipe') s = d.in
    else if (d.type === 'lazy') s = d.getter()
    else return s
  }
}

const literalOf = (schema) => {
  const d = def(unwrap(schema))
  return d.type === 'literal' && d.values?.length === 1 ? d.values[0] : undefined
}
const isOptional = (schema) => schema.safeParse(undefined).success
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)

function strictWalk(value, schema, path, out) {
  const s = unwrap(schema)
  const d = def(s)
  if (d.type === 'object') {
    if (!isObj(value)) return
    const open = s.meta?.()?.specOpen === true
    for (const [key, v] of Object.entries(value)) {
      const field = Object.hasOwn(d.shape, key) ? d.shape[key] : undefined
      if (field === undefined) {
        if (!open) out.push(`unknown key ${path}/${key}`)
        continue
      }
      if (v === null && isOptional(field)) {
        out.push(`null at optional field ${path}/${key} (omit it instead)`)
        continue
      }
      strictWalk(v, field, `${path}/${key}`, out)
    }
  } else if (d.type === 'array') {
    if (Array.isArray(value)) value.forEach((v, i) => strictWalk(v, d.element, `${path}/${i}`, out))
  } else if (d.type === 'record') {
    if (isObj(value)) for (const [k, v] of Object.entries(value)) strictWalk(v, d.valueType, `${path}/${k}`, out)
  } else if (d.type === 'union') {
    if (typeof d.discriminator === 'string') {
      if (!isObj(value)) return
      const option = d.options.find((o) => literalOf(def(unwrap(o)).shape?.[d.discriminator]) === value[d.discriminator])
      if (option) strictWalk(value, option, path, out)
      return
    }
    const objects = d.options.filter((o) => def(unwrap(o)).type === 'object')
    if (objects.length > 1 && isObj(value)) {
      // Ambiguous: use the first option that parses.
      const match = objects.find((o) => o.safeParse(value).success)
      if (match) strictWalk(value, match, path, out)
      return
    }
    const option = d.options.find((o) => {
      const t = def(unwrap(o)).type
      return (t === 'array' && Array.isArray(value)) || (t === 'object' && isObj(value))
    })
    if (option) strictWalk(value, option, path, out)
  }
}

// ---- ordering rules ----
function orderProblems(events, requireTerminal) {
  const out = []
  const open = { text: new Set(), tool: new Set(), step: new Set(), reasoning: new Set(), reasoningMsg: new Set() }
  const openNames = () =>
    Object.entries(open).filter(([, s]) => s.size).map(([k, s]) => `${k}: ${[...s].join(', ')}`)
  let terminal = null
  let started = null
  const need = (set, id, i, what) => {
    if (!set.has(id)) out.push([i, `${events[i].type} for ${what} '${id}' that is not open`])
  }
  events.forEach((e, i) => {
    const type = e?.type
    if (typeof type !== 'string') return out.push([i, 'event has no string type'])
    if (i === 0 && type !== 'RUN_STARTED' && type !== 'RUN_ERROR') out.push([i, `first event is ${type}, not RUN_STARTED/RUN_ERROR`])
    if (terminal && type !== 'RUN_STARTED') out.push([i, `${type} after ${terminal}`])
    switch (type) {
      case 'RUN_STARTED':
        if (started && !terminal) out.push([i, 'RUN_STARTED while a run is still open'])
        started = e
        terminal = null
        Object.values(open).forEach((s) => s.clear())
        break
      case 'RUN_FINISHED':
        if (openNames().length) out.push([i, `RUN_FINISHED while open: ${openNames().join('; ')}`])
        if (started && (e.runId !== started.runId || e.threadId !== started.threadId)) {
          out.push([i, `RUN_FINISHED threadId/runId (${e.threadId}/${e.runId}) differ from RUN_STARTED (${started.threadId}/${started.runId})`])
        }
        terminal = type
        break
      case 'RUN_ERROR':
        terminal = type
        break
      case 'TEXT_MESSAGE_START':
        if (open.text.has(e.messageId)) out.push([i, `TEXT_MESSAGE_START for already open message '${e.messageId}'`])
        open.text.add(e.messageId)
        break
      case 'TEXT_MESSAGE_CONTENT':
        need(open.text, e.messageId, i, 'message')
        break
      case 'TEXT_MESSAGE_END':
        need(open.text, e.messageId, i, 'message')
        open.text.delete(e.messageId)
        break
      case 'TOOL_CALL_START':
        if (open.tool.has(e.toolCallId)) out.push([i, `TOOL_CALL_START for already open tool call '${e.toolCallId}'`])
        open.tool.add(e.toolCallId)
        break
      case 'TOOL_CALL_ARGS':
        need(open.tool, e.toolCallId, i, 'tool call')
        break
      case 'TOOL_CALL_END':
        need(open.tool, e.toolCallId, i, 'tool call')
        open.tool.delete(e.toolCallId)
        break
      case 'STEP_STARTED':
        if (open.step.has(e.stepName)) out.push([i, `STEP_STARTED for already open step '${e.stepName}'`])
        open.step.add(e.stepName)
        break
      case 'STEP_FINISHED':
        need(open.step, e.stepName, i, 'step')
        open.step.delete(e.stepName)
        break
      case 'REASONING_START':
        open.reasoning.add(e.messageId)
        break
      case 'REASONING_END':
        need(open.reasoning, e.messageId, i, 'reasoning span')
        open.reasoning.delete(e.messageId)
        break
      case 'REASONING_MESSAGE_START':
        open.reasoningMsg.add(e.messageId)
        break
      case 'REASONING_MESSAGE_CONTENT':
        need(open.reasoningMsg, e.messageId, i, 'reasoning message')
        break
      case 'REASONING_MESSAGE_END':
        need(open.reasoningMsg, e.messageId, i, 'reasoning message')
        open.reasoningMsg.delete(e.messageId)
        break
    }
  })
  if (requireTerminal && events.length && !terminal) out.push([-1, 'stream ended without RUN_FINISHED/RUN_ERROR'])
  if (requireTerminal && events.length === 0) out.push([-1, 'empty stream'])
  return out
}

// ---- @ag-ui/client's own stages, as HttpAgent runs them ----
async function clientProblems(events) {
  const out = []
  let index = -1
  const warn = console.warn
  console.warn = (...args) => out.push([index, `warning: ${args.map(String).join(' ')}`])
  try {
    await lastValueFrom(
      from(events).pipe(
        tap(() => index++),
        enforceEvents(),
        transformChunks(),
        verifyEvents(),
        toArray(),
      ),
    )
  } catch (error) {
    out.push([index, `rejected: ${error?.message ?? String(error)}`])
  } finally {
    console.warn = warn
  }
  return out
}

// ---- @ag-ui/client 0.0.59, as its HttpAgent reads a stream ----
async function clientProblems0059(events) {
  const out = []
  const parsed = []
  for (const [index, event] of events.entries()) {
    const result = EventSchemas0059.safeParse(event)
    if (!result.success) {
      const issue = result.error.issues[0]
      return [[index, `${event?.type}: /${issue.path.join('/')}: ${issue.message}`]]
    }
    parsed.push(result.data)
  }
  let index = -1
  const warn = console.warn
  console.warn = (...args) => out.push([index, `warning: ${args.map(String).join(' ')}`])
  try {
    const stages = [tap(() => index++), transformChunks0059(), verifyEvents0059(), toArray()]
    await lastValueFrom(from(parsed).pipe(...stages))
  } catch (error) {
    out.push([index, `rejected: ${error?.message ?? String(error)}`])
  } finally {
    console.warn = warn
  }
  return out
}

try {
  const job = await readJob()
  const requireTerminal = job.requireTerminal ?? true
  const problems = []
  for (const [stream, events] of (job.streams ?? []).entries()) {
    const add = (source) => ([index, problem]) => problems.push({ stream, index, problem, source })
    events.forEach((event, index) => {
      if (!isObj(event) || '__unparsed' in event) {
        return add('schema')([index, `not a JSON object: ${JSON.stringify(event).slice(0, 200)}`])
      }
      const parsed = EventSchema.safeParse(event)
      if (!parsed.success) {
        for (const issue of parsed.error.issues) {
          add('schema')([index, `${event.type}: /${issue.path.join('/')}: ${issue.message}`])
        }
      }
      const strict = []
      strictWalk(event, EventSchema, '', strict)
      strict.forEach((p) => add('strict')([index, `${event.type}: ${p}`]))
    })
    orderProblems(events, requireTerminal).forEach(add('order'))
    ;(await clientProblems(events)).forEach(add('client'))
    ;(await clientProblems0059(events)).forEach(add('0.0.59'))
  }
  problems.sort((a, b) => a.stream - b.stream || a.index - b.index)
  finish({ ok: problems.length === 0, problems })
} catch (error) {
  process.stderr.write(`harness error: ${error?.stack ?? error}\n`)
  finish({ ok: false, problems: [], harnessError: errorInfo(error) }, 1)
}
