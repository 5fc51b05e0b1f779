// TanStack AI's real headless ChatClient, with or without the published tool
// definitions registered, answering the assistant's tool approvals the way a
// `useChat` app written from TanStack's tool-approval guide would.
//
//   node tool_approval_chat.mjs < job.json > result.json
//
// Job: {url, threadId, tools: [spec] (see tool_approval_lib.mjs), timeoutMs?,
//       steps: [step]}
//   {"send": text}                           client.sendMessage(text)
//   {"decide": [{index | id, ...decision}], "transaction"?: bool}
//        apply each decision to the bound item (tool-approval:
//        resolveInterrupt(approve, {editedArgs, payload}); generic:
//        resolveInterrupt({approved, editedArgs?, payload?}); {cancel: true}).
//        With "transaction", inside client.resolveInterrupts(fn).
//   {"bulk": bool}                           client.resolveInterrupts(bool)
// Result: {steps: [{stepError, status, error, interruptErrors,
//          interrupts: [item (tool_approval_lib.mjs describeItem) + wireToolCallId:
//                       the toolCallId of the AG-UI Interrupt as received],
//          events: [every AG-UI event read in the step],
//          requests: [{body: request body sent, events: that response's events}]}]}
import { ChatClient, fetchServerSentEvents } from '@tanstack/ai-client'
import {
  decide, describeItem, plain, captureConsole, readJob, finish, sleep, tools,
} from './tool_approval_lib.mjs'

captureConsole({})
const job = await readJob()
const deadline = Date.now() + (job.timeoutMs ?? 30000)
let record = { requests: [], events: [], reads: [] }
const descriptors = new Map() // interrupt id -> the AG-UI Interrupt as received

function parseSse(text) {
  return text
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => JSON.parse(line.slice(5).trim()))
}

/** fetch, keeping every request body and every SSE event read in this step. */
async function recordingFetch(url, init = {}) {
  const step = record
  const request = { body: typeof init.body === 'string' ? JSON.parse(init.body) : null, events: [] }
  step.requests.push(request)
  const response = await fetch(url, init)
  if (!response.body) return response
  const [mine, copy] = response.body.tee()
  step.reads.push(
    new Response(copy).text().then((text) => {
      if (/event-stream/.test(response.headers.get('content-type') ?? '')) {
        request.events = parseSse(text)
        step.events.push(...request.events)
        for (const event of request.events) {
          if (event.type !== 'RUN_FINISHED' || event.outcome?.type !== 'interrupt') continue
          for (const interrupt of event.outcome.interrupts) descriptors.set(interrupt.id, interrupt)
        }
      }
    }),
  )
  return new Response(mine, { status: response.status, headers: response.headers })
}

const client = new ChatClient({
  connection: fetchServerSentEvents(job.url, { fetchClient: recordingFetch }),
  threadId: job.threadId,
  tools: await tools(job.tools ?? []),
})

const idle = () =>
  !client.getIsLoading() &&
  !client.getInterruptState().resuming &&
  !['submitted', 'streaming'].includes(client.getStatus())

async function settle() {
  await sleep(20)
  let stable = 0
  while (stable < 3) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the client to settle')
    stable = idle() ? stable + 1 : 0
    await sleep(10)
  }
  await Promise.all(record.reads)
}

function target(spec) {
  const items = client.getInterrupts()
  const item = spec.id !== undefined ? items.find((i) => i.id === spec.id) : items[spec.index]
  if (!item) throw new Error(`no pending interrupt ${spec.id ?? `#${spec.index}`}`)
  return item
}

async function run(step) {
  if ('send' in step) return client.sendMessage(step.send)
  if ('bulk' in step) return client.resolveInterrupts(step.bulk)
  if (!('decide' in step)) throw new Error(`unknown step ${JSON.stringify(step)}`)
  if (step.transaction) {
    const ids = step.decide.map((spec) => [target(spec).id, spec])
    return client.resolveInterrupts((item) => {
      const found = ids.find(([id]) => id === item.id)
      if (found) decide(item, found[1])
      return undefined
    })
  }
  for (const spec of step.decide) decide(target(spec), spec)
}

const steps = []
try {
  for (const step of job.steps) {
    record = { requests: [], events: [], reads: [] }
    let stepError = null
    try {
      await run(step)
    } catch (error) {
      stepError = error instanceof Error ? error.message : String(error)
    }
    await settle()
    steps.push({
      stepError,
      status: client.getStatus(),
      error: client.getError()?.message ?? null,
      interrupts: client.getInterrupts().map((item) => ({
        ...describeItem(item),
        wireToolCallId: descriptors.get(item.id)?.toolCallId ?? null,
      })),
      interruptErrors: plain(client.getInterruptState().interruptErrors),
      events: record.events,
      requests: record.requests,
    })
  }
  client.dispose()
  finish({ steps })
} catch (error) {
  process.stderr.write(`${error?.stack ?? error}\n`)
  finish({ steps, harnessError: String(error?.message ?? error) }, 1)
}
