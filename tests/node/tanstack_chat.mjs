// Drive TanStack AI's real headless ChatClient (@tanstack/ai-client) against
// an AG-UI SSE endpoint, the way a UI would.
//
//   node tanstack_chat.mjs < job.json > result.json
//
// Job: {url, threadId, timeoutMs?, persistence?: bool, headers?: {name: value},
//       clientTools?: [{name, description, parameters, result, needsApproval?, zod?}],
//       steps: [step, ...]}   (headers go with every request, e.g. X-Principal)
//   clientTools: frontend tools registered as TanStack client tools
//   (`toolDefinition(...).client(execute)`, `parameters` a JSON Schema): with a
//   `result`, `execute` answers it and is recorded in the step's
//   `toolExecutions`; without, no `execute` (a "toolResult" step answers).
//   `needsApproval: true` declares it so; `zod: true` gives it the zod schema
//   `z.fromJSONSchema(parameters)` (as an app writes tools) instead of the raw one.
//   {"send": "text"}                         client.sendMessage(text)
//   {"resolve": [{"id"|"index", "payload"} | {"id"|"index", "cancel": true}],
//    "transaction"?: bool}                   item.resolveInterrupt(payload) /
//        item.cancel() on the bound items (index = n-th item of
//        client.getInterrupts() at step start); {"approve": bool, "editedArgs"?}
//        instead of "payload" decides an approval: a tool-approval item's
//        resolveInterrupt(approve, {editedArgs}), a generic one's
//        resolveInterrupt({approved, editedArgs?}). The client submits ONE
//        continuation once every resumable item is staged. With
//        "transaction": true, uses client.resolveInterrupts(fn) instead.
//   {"toolResult": output, "tool"?: name}    client.addToolResult({toolCallId, tool,
//        output, state: "output-available"}) for the newest tool call the client
//        holds without an output (a frontend tool answered by the UI itself);
//        the client then continues on its own
//   {"cancelAll": true}                      client.cancelInterrupts()
//   {"retry": true}                          client.retryInterrupts()
//   {"resumeUnsafe": [{interruptId, status, payload?}]}
//        client.resumeInterruptsUnsafe(items) (escape hatch: lets a test send
//        resumes the bound-item API would refuse, e.g. unknown ids).
//   {"attach": true}                         client.attach() (hydrates when
//        persistence is true: GET url?threadId=..., and, when the answer names
//        an activeRun, joins it: GET url?offset=-1&runId=...)
//   {"reload": true, "persistence"?: bool}   a page reload: dispose (which
//        drops any open stream), new ChatClient (persistence from the step,
//        else the job's), attach()
//
// When a step is done (any step may say, default "idle"):
//   "wait": "idle"      the client is idle (not loading, not resuming) and every
//                       response body the step opened has ended
//   "wait": {"event": "RUN_STARTED"}   the step has received an event of that
//                       type; the client keeps streaming in the background
//                       (e.g. a run the test holds open), so a later step (or
//                       the test, through the server) carries it on
//   "wait": false       not at all: the snapshot is taken once the action returns
// An attach/reload step first waits for the hydration answer to be applied,
// so "idle" then also covers the join it may start.
// Events land in the record of the step whose request received them (a stream
// left running shows up in its own step, even after its snapshot); client
// chunks land in the step current when the client processed them.
//
// Result: {snapshots: [snapshot per step]} (+ timedOut: true, pendingStep on timeout)
//   snapshot = {step, action, stepError, status, isLoading, error, messages,
//     interrupts: [{id, kind, canResolve, status, reason, message, toolCallId,
//       error, errors, responseSchema, binding}],
//     interruptErrors, resuming, resumeState,
//     events: [raw AG-UI events received during the step, in order],
//     chunks: [events the client processed (onChunk, after its own de-dupe of
//              replayed ids), in order],
//     requests: [{method, url, headers, body, status, contentType,
//                 events + ids (the SSE id of each event, or null) | text,
//                 fetchError?, readError?}],
//     toolExecutions: [{name, toolCallId, input}] (client tools executed),
//     textLengths: [length of the newest assistant message's text, as the
//       client holds it, at each TEXT_MESSAGE_CONTENT chunk it processed],
//     logs: [{level, text}] (client console warnings/errors)}
// Exit 0 unless the harness itself fails (1) or the job times out (2).
import { toolDefinition } from '@tanstack/ai'
import { ChatClient, fetchServerSentEvents } from '@tanstack/ai-client'
import { z } from 'zod-v4'
import {
  captureConsole, describeItem, errorInfo, finish, newStepRecord, plain, readJob,
  settleStep, sleep, teeFetch, waitFor,
} from './harness.mjs'

const sink = { logs: [] }
captureConsole(sink)

const job = await readJob()
const timeoutMs = job.timeoutMs ?? 30000
const deadline = Date.now() + timeoutMs
const newRecord = () => newStepRecord({ chunks: [], toolExecutions: [], textLengths: [] })
const recorder = { current: newRecord() }
const snapshots = []
const descriptors = new Map() // interrupt id -> AG-UI Interrupt as received

const timer = setTimeout(() => {
  finish({ snapshots, timedOut: true, pendingStep: stepSummary(recorder.current) }, 2)
}, timeoutMs)

let hydration = null // the latest hydrate() the client started (settles when it has its answer)
let executing = 0 // client tool executions not yet returned

const clientTools = (job.clientTools ?? []).map(({ name, description, parameters, needsApproval, zod, ...spec }) => {
  const inputSchema = zod ? z.fromJSONSchema(parameters) : parameters
  const definition = toolDefinition({ name, description, inputSchema, ...(needsApproval ? { needsApproval } : {}) })
  if (!('result' in spec)) return definition.client() // answered by a "toolResult" step
  return definition.client(async (input, options) => {
    executing++
    recorder.current.toolExecutions.push({ name, toolCallId: options?.toolCallId ?? null, input: plain(input) })
    await sleep(0)
    executing--
    return spec.result
  })
})

/** The newest assistant message's text, as the client holds it now. */
function assistantTextLength() {
  const last = client.getMessages().findLast((m) => m.role === 'assistant')
  return (last?.parts ?? []).filter((p) => p.type === 'text').reduce((n, p) => n + p.content.length, 0)
}

function makeClient(persistence = job.persistence) {
  const connection = fetchServerSentEvents(job.url, {
    fetchClient: teeFetch(recorder),
    ...(job.headers ? { headers: job.headers } : {}),
  })
  // Observe hydration: attach() starts it without returning anything to await.
  const hydrate = connection.hydrate
  connection.hydrate = (...args) => {
    const answer = hydrate(...args)
    hydration = answer.then(
      () => {},
      () => {},
    )
    return answer
  }
  return new ChatClient({
    connection,
    threadId: job.threadId,
    onChunk: (chunk) => {
      recorder.current.chunks.push(plain(chunk))
      // onChunk runs just before the client applies the chunk: measure right after
      const rec = recorder.current
      if (chunk?.type === 'TEXT_MESSAGE_CONTENT') queueMicrotask(() => rec.textLengths.push(assistantTextLength()))
    },
    ...(clientTools.length ? { tools: clientTools } : {}),
    ...(persistence ? { persistence: true } : {}),
  })
}
let client = makeClient()

const isIdle = () =>
  executing === 0 &&
  !client.getIsLoading() &&
  !client.getInterruptState().resuming &&
  client.getStatus() !== 'submitted' &&
  client.getStatus() !== 'streaming'

function pickTargets(spec) {
  const items = client.getInterrupts()
  return spec.map((t) => {
    const id = t.id ?? items[t.index]?.id
    if (id === undefined) throw new StepError(`no pending interrupt at index ${t.index}`)
    return { ...t, id }
  })
}

class StepError extends Error {}

function applyTo(item, target, problems) {
  if (target.cancel) {
    if (typeof item.cancel !== 'function') problems.push(`${item.id} (${item.kind}) has no cancel()`)
    else item.cancel()
  } else if (typeof item.resolveInterrupt !== 'function') {
    problems.push(`${item.id} (${item.kind}) has no resolveInterrupt()`)
  } else if ('approve' in target) {
    const edits = target.editedArgs !== undefined ? { editedArgs: target.editedArgs } : {}
    if (item.kind === 'tool-approval') item.resolveInterrupt(target.approve, edits)
    else item.resolveInterrupt({ approved: target.approve, ...edits })
  } else {
    item.resolveInterrupt(target.payload)
  }
}

async function runStep(step) {
  const problems = []
  if ('send' in step) {
    await client.sendMessage(step.send)
  } else if ('resolve' in step) {
    const targets = pickTargets(step.resolve)
    if (step.transaction) {
      client.resolveInterrupts((item) => {
        const target = targets.find((t) => t.id === item.id)
        if (target) applyTo(item, target, problems)
        return undefined
      })
    } else {
      for (const target of targets) {
        // Re-read each time: every resolve republishes the bound items.
        const item = client.getInterrupts().find((i) => i.id === target.id)
        if (!item) problems.push(`no pending interrupt ${target.id}`)
        else applyTo(item, target, problems)
      }
    }
  } else if ('toolResult' in step) {
    const call = client
      .getMessages()
      .flatMap((m) => (m.role === 'assistant' ? m.parts : []))
      .findLast((p) => p.type === 'tool-call' && p.output === undefined && (!step.tool || p.name === step.tool))
    if (!call) throw new StepError('no tool call waits for a result')
    await client.addToolResult({ toolCallId: call.id, tool: call.name, output: step.toolResult, state: 'output-available' })
  } else if (step.cancelAll) {
    client.cancelInterrupts()
  } else if (step.retry) {
    client.retryInterrupts()
  } else if ('resumeUnsafe' in step) {
    const started = await client.resumeInterruptsUnsafe(step.resumeUnsafe)
    if (!started) problems.push('resumeInterruptsUnsafe returned false')
  } else if (step.attach || step.reload) {
    if (step.reload) {
      client.dispose()
      client = makeClient(step.persistence ?? job.persistence)
    }
    hydration = null
    client.attach()
    // Hydration is fire-and-forget: wait for its answer, then one macrotask so the
    // client has applied it (set the messages, the interrupts, or started a join).
    if (hydration) {
      await hydration
      await sleep(0)
    }
  } else {
    throw new Error(`unknown step: ${JSON.stringify(step)}`)
  }
  return problems
}

function stepSummary(rec) {
  const { events, chunks, requests, logs, toolExecutions, textLengths } = rec
  return { events, chunks, requests, logs, toolExecutions, textLengths }
}

const OPTIONS = new Set(['transaction', 'wait', 'persistence'])

/** Wait as the step says (see "When a step is done"); false when the job's time ran out. */
async function stepDone(step, rec) {
  const wait = step.wait ?? 'idle'
  const timeoutMs = () => Math.max(0, deadline - Date.now())
  if (wait === false) return true
  if (wait === 'idle') {
    // Let any submission start, then wait until the client is idle.
    await sleep(20)
    if (!(await waitFor(isIdle, { timeoutMs: timeoutMs() }))) return false
    await settleStep(rec, timeoutMs())
    await sleep(20)
    return true
  }
  if (typeof wait?.event === 'string') {
    const seen = () => rec.events.some((event) => event?.type === wait.event)
    return waitFor(seen, { timeoutMs: timeoutMs(), stableFor: 1 })
  }
  throw new Error(`unknown wait: ${JSON.stringify(wait)}`)
}

function snapshot(index, step, rec, stepError) {
  for (const event of rec.events) {
    if (event?.type === 'RUN_FINISHED' && event.outcome?.type === 'interrupt') {
      for (const i of event.outcome.interrupts ?? []) descriptors.set(i.id, i)
    }
  }
  for (const request of rec.requests) {
    // Hydration answers (GET ?threadId=) carry pending interrupts too.
    try {
      for (const i of JSON.parse(request.text ?? 'null')?.interrupts?.pending ?? []) descriptors.set(i.id, i)
    } catch {}
  }
  const state = client.getInterruptState()
  return {
    step: index,
    action: Object.keys(step).find((k) => !OPTIONS.has(k)) ?? null,
    stepError,
    status: client.getStatus(),
    isLoading: client.getIsLoading(),
    error: client.getError()?.message ?? null,
    messages: plain(client.getMessages()),
    interrupts: client.getInterrupts().map((item) => describeItem(item, descriptors.get(item.id))),
    interruptErrors: plain(state.interruptErrors),
    resuming: state.resuming,
    resumeState: plain(client.getResumeState()),
    ...stepSummary(rec),
  }
}

try {
  for (const [index, step] of job.steps.entries()) {
    const rec = newRecord()
    recorder.current = rec
    sink.logs = rec.logs
    let stepError = null
    try {
      const problems = await runStep(step)
      if (problems.length) stepError = { message: problems.join('; ') }
    } catch (error) {
      if (error instanceof Error && /^unknown step/.test(error.message)) throw error
      stepError = errorInfo(error)
    }
    if (!(await stepDone(step, rec))) {
      clearTimeout(timer)
      finish({ snapshots, timedOut: true, pendingStep: stepSummary(rec) }, 2)
      await new Promise(() => {}) // finish() exits the process
    }
    snapshots.push(snapshot(index, step, rec, stepError))
  }
  clearTimeout(timer)
  try {
    client.dispose()
  } catch {}
  finish({ snapshots })
} catch (error) {
  clearTimeout(timer)
  process.stderr.write(`harness error: ${error?.stack ?? error}\n`)
  finish({ snapshots, harnessError: errorInfo(error) }, 1)
}
