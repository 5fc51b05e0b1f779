// CopilotKit's real `useInterrupt` (v2, @copilotkit/react-core 1.74.0) rendered by react-dom
// under jsdom, headless, the way an app's page would use it.
//
//   node use_interrupt.mjs < job.json > result.json
//
// Job: {agentId?: "assistant", timeoutMs?, headers?, agentUrl | runtimeUrl, gatewayUrl?,
//       scenarios: [{name, threadId, steps: [step, ...]}]}
//   agentUrl    a self-managed `HttpAgent` (@ag-ui/client 0.0.59, the version CopilotKit pins)
//               pointed at the gateway's agent (`.../agents/assistant`)
//   runtimeUrl  CopilotKit's runtime (`@copilotkit/runtime`, runtime.mjs) in between: the
//               agent is the runtime's, found through its `/info`
//   gatewayUrl  the gateway's agent URL, for "awaitExpired" (with a runtime in between)
// Each scenario is a page of its own (a new core and agent, mounted), one after the other.
// Steps:
//   {"send": "text"}        a user message, then `copilotkit.runAgent({agent})` (what the chat
//                           input does)
//   {"answer": [{"index"|"id", "payload"} | {"index"|"id", "cancel": true}]}
//                           click each interrupt card's button, in order: it calls the hook's
//                           `resolve(payload, id)`, or `cancel(id)`; the hook sends one resume
//                           once every open interrupt has its answer
//   {"reload": true}        a page reload: unmount, a new core and agent for the same thread,
//                           mount, then `copilotkit.connectAgent({agent})` (what CopilotChat
//                           does on mount for a thread it is given)
//   {"connect": true}       `copilotkit.connectAgent({agent})` on the page as it is
//   {"redeliver": true}     `copilotkit.runAgent({agent})` without a new message
//   {"awaitExpired": true}  wait until the gateway's hydrate (`GET ?threadId=`) offers no
//                           interrupt (its timer expired the form); the page does nothing
// Each step is awaited to its end (the run it started, every response read, React settled).
//
// Result: {results: {name: {snapshots: [{step, stepError, requests, messages, interrupts,
//   cards, errors, logs, running}], error?}}}
//   requests   every HTTP request the page made in the step: {method, url, body, status,
//              events (SSE) | text, fetchError?, readError?}
//   messages   the agent's messages (what the page shows)
//   interrupts the open interrupts `useInterrupt` renders ({id, reason, message, toolCallId,
//              responseSchema, expiresAt, metadata})
//   cards      the interrupt cards in the DOM ({id, reason, message})
//   errors     what CopilotKit reported to `onError` ({code, message, runtimeErrorCode})
//   logs       console warnings and errors
// Exit 0 unless the driver itself fails (1) or the job times out (2).
import { JSDOM } from 'jsdom'
import { captureConsole, errorInfo, finish, parseSseFrames, plain, readJob } from '../node/harness.mjs'

const dom = new JSDOM('<!doctype html><html><body><div id="root"></div></body></html>', {
  url: 'http://localhost/',
  pretendToBeVisual: true,
})
for (const name of [
  'window', 'document', 'navigator', 'HTMLElement', 'Element', 'Node', 'MutationObserver',
  'getComputedStyle', 'requestAnimationFrame', 'cancelAnimationFrame', 'localStorage',
  'sessionStorage', 'MouseEvent',
]) {
  const value = name === 'window' ? dom.window : dom.window[name]
  Object.defineProperty(globalThis, name, { value, configurable: true, writable: true })
}

const sink = { logs: [] }
captureConsole(sink)

const React = await import('react')
const { createRoot } = await import('react-dom/client')
const { HttpAgent } = await import('@ag-ui/client')
const { CopilotKitCoreReact, useAgent, useInterrupt } = await import('@copilotkit/react-core/v2/headless')
const { CopilotKitContext } = await import('@copilotkit/react-core/v2/context')
const h = React.createElement

const job = await readJob()
const agentId = job.agentId ?? 'assistant'
const results = {}
let record = newRecord()
let scenario = null // the one being run

const timer = setTimeout(
  () => finish({ results, timedOut: true, pendingScenario: scenario?.name ?? null, pendingStep: record.step }, 2),
  job.timeoutMs ?? 120000,
)

function newRecord(step = null) {
  return { step, requests: [], bodies: [], logs: [], errors: [] }
}

// Every request the page makes (the HttpAgent's, the runtime client's), with its response.
const realFetch = globalThis.fetch
globalThis.fetch = async (url, init = {}) => {
  const rec = record
  const entry = { method: init.method ?? 'GET', url: String(url), body: parseJson(init.body) }
  rec.requests.push(entry)
  let response
  try {
    response = await realFetch(url, init)
  } catch (error) {
    entry.fetchError = error?.message ?? String(error)
    throw error
  }
  entry.status = response.status
  if (!response.body) return response
  const [mine, copy] = response.body.tee()
  rec.bodies.push(readBody(copy, entry, response.headers.get('content-type') ?? ''))
  return new Response(mine, { status: response.status, statusText: response.statusText, headers: response.headers })
}

function parseJson(body) {
  if (typeof body !== 'string') return body ?? null
  try {
    return JSON.parse(body)
  } catch {
    return body
  }
}

async function readBody(stream, entry, contentType) {
  let text = ''
  const decoder = new TextDecoder()
  try {
    const reader = stream.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      text += decoder.decode(value, { stream: true })
    }
  } catch (error) {
    entry.readError = error?.message ?? String(error)
  }
  text += decoder.decode()
  if (contentType.includes('text/event-stream')) entry.events = parseSseFrames(text).map((f) => f.event)
  else entry.text = text
}

// ---- the page ----
const answers = new Map() // interrupt id -> {payload} | {cancel: true}, set by an "answer" step
const clicks = [] // what each click's resolve()/cancel() returned (the resume's run)
let rendered = [] // the interrupts of the hook's latest render

function Card({ interrupt, resolve, cancel }) {
  const act = () => {
    const answer = answers.get(interrupt.id)
    clicks.push(Promise.resolve(answer.cancel ? cancel(interrupt.id) : resolve(answer.payload, interrupt.id)))
  }
  return h(
    'section',
    { 'data-testid': 'interrupt', 'data-id': interrupt.id, 'data-reason': interrupt.reason },
    h('p', null, interrupt.message ?? ''),
    h('button', { type: 'button', 'data-action': 'answer', onClick: act }, 'Answer'),
  )
}

let renders = 0 // renders of the hook's component, to tell when React has settled

function Interrupts() {
  renders++
  const element = useInterrupt({
    agentId,
    renderInChat: false,
    render: ({ interrupts, resolve, cancel }) => {
      rendered = interrupts
      return h(
        'div',
        null,
        interrupts.map((interrupt) => h(Card, { key: interrupt.id, interrupt, resolve, cancel })),
      )
    },
  })
  if (element == null) rendered = []
  return h('main', null, element)
}

/** Commits once React has run what was scheduled before it: a probe's state update. */
let probe = null
function Probe() {
  const [request, setRequest] = React.useState(null)
  probe = setRequest
  React.useEffect(() => request?.done(), [request])
  return null
}

/** Wait until React has nothing left to render: probes until one passes with no render of
 * the hook's component (its effects update its state, which renders it again). */
async function settle() {
  for (;;) {
    const before = renders
    await new Promise((done) => probe({ done }))
    if (renders === before) return
  }
}

function Page({ onAgent }) {
  const { agent, isReady } = useAgent({ agentId })
  React.useEffect(() => {
    if (isReady) onAgent(agent) // with a runtime: once its `/info` named the agent
  }, [agent, isReady])
  return h(React.Fragment, null, h(Probe), h(Interrupts))
}

/** The provider: CopilotKit's context, and the runtime connection started after mount (its
 * children's effects, which subscribe to the connection, run first). */
function Host({ value, children }) {
  React.useEffect(() => value.copilotkit.connect(), [value])
  return h(CopilotKitContext.Provider, { value }, children)
}

let page = null // {copilotkit, agent, root}

async function mount() {
  const agents = {}
  if (job.agentUrl) {
    agents[agentId] = new HttpAgent({ url: job.agentUrl, agentId, threadId: scenario.threadId, headers: job.headers ?? {} })
  }
  const copilotkit = new CopilotKitCoreReact({
    // as CopilotKitProvider does: `/info` is asked for once the page has mounted (Host)
    ...(job.runtimeUrl ? { runtimeUrl: job.runtimeUrl, runtimeTransport: 'rest', deferInitialConnection: true } : {}),
    headers: job.headers ?? {},
    agents__unsafe_dev_only: agents,
  })
  copilotkit.subscribe({
    onError: ({ error, code, context }) => {
      record.errors.push({ code, message: error?.message ?? String(error), runtimeErrorCode: context?.runtimeErrorCode ?? null })
    },
  })
  let found
  const agentReady = new Promise((resolve) => (found = resolve))
  const root = createRoot(document.getElementById('root'))
  const value = { copilotkit, executingToolCallIds: new Set() }
  root.render(h(Host, { value }, h(Page, { onAgent: found })))
  const agent = await agentReady
  agent.threadId = scenario.threadId
  page = { copilotkit, agent, root }
}

async function unmount() {
  page.root.unmount()
  page = null
}

const pick = (spec) => {
  const id = spec.id ?? rendered[spec.index]?.id
  if (id === undefined) throw new Error(`no open interrupt at index ${spec.index}`)
  return id
}

async function runStep(step) {
  if ('send' in step) {
    const { agent, copilotkit } = page
    agent.addMessage({ id: crypto.randomUUID(), role: 'user', content: step.send })
    await copilotkit.runAgent({ agent })
  } else if ('answer' in step) {
    const targets = step.answer.map((spec) => ({ ...spec, id: pick(spec) }))
    for (const target of targets) answers.set(target.id, target.cancel ? { cancel: true } : { payload: target.payload })
    clicks.length = 0
    for (const target of targets) {
      const button = document.querySelector(`[data-testid="interrupt"][data-id="${target.id}"] [data-action="answer"]`)
      if (!button) throw new Error(`no card for interrupt ${target.id}`)
      button.dispatchEvent(new MouseEvent('click', { bubbles: true }))
    }
    await Promise.all(clicks)
  } else if ('reload' in step) {
    await unmount()
    await mount()
    await page.copilotkit.connectAgent({ agent: page.agent })
  } else if ('connect' in step) {
    await page.copilotkit.connectAgent({ agent: page.agent })
  } else if ('redeliver' in step) {
    await page.copilotkit.runAgent({ agent: page.agent })
  } else if ('awaitExpired' in step) {
    await untilNothingOffered()
  } else {
    throw new Error(`unknown step ${JSON.stringify(step)}`)
  }
}

/** Poll the gateway's hydrate until it offers no interrupt (bounded by the job's timeout). */
async function untilNothingOffered() {
  const url = new URL(job.gatewayUrl ?? job.agentUrl)
  url.searchParams.set('threadId', scenario.threadId)
  for (;;) {
    const response = await realFetch(url, { headers: job.headers ?? {} })
    const hydrated = await response.json()
    if (!hydrated.interrupts?.pending?.length) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

function snapshot(step, stepError) {
  const cards = [...document.querySelectorAll('[data-testid="interrupt"]')].map((el) => ({
    id: el.dataset.id,
    reason: el.dataset.reason,
    message: el.querySelector('p')?.textContent ?? '',
  }))
  return {
    step,
    stepError,
    requests: record.requests,
    messages: plain(page?.agent.messages ?? []),
    interrupts: plain(rendered),
    cards,
    errors: record.errors,
    logs: record.logs,
    running: Boolean(page?.agent.isRunning),
  }
}

async function runScenario() {
  const snapshots = []
  results[scenario.name] = { snapshots }
  record = newRecord({ mount: true }) // the page's first requests (a runtime's `/info`)
  await mount()
  try {
    for (const step of scenario.steps) {
      record = newRecord(step)
      sink.logs = record.logs
      let stepError = null
      try {
        await runStep(step)
      } catch (error) {
        stepError = errorInfo(error)
      }
      await Promise.all(record.bodies)
      await settle()
      snapshots.push(snapshot(step, stepError))
    }
  } finally {
    if (page) await unmount()
    answers.clear()
    rendered = []
  }
}

try {
  for (scenario of job.scenarios) {
    try {
      await runScenario()
    } catch (error) {
      results[scenario.name].error = errorInfo(error)
    }
  }
  clearTimeout(timer)
  finish({ results })
} catch (error) {
  process.stderr.write(`driver error: ${error?.stack ?? error}\n`)
  finish({ results, driverError: errorInfo(error) }, 1)
}
