// Drive AG-UI's real HttpAgent (@ag-ui/client 1.0.0, or 0.0.59: the version
// CopilotKit 1.74 pins) against an AG-UI SSE endpoint.
//
//   node agui_agent.mjs < job.json > result.json
//
// Job: {url, threadId, timeoutMs?, client?: "1.0.0" | "0.0.59", steps: [step, ...]}
//   {"send": "text", "tools"?: [tool], "parts"?: [part]}   agent.addMessage({id,
//                      role: "user", content}) then agent.runAgent({tools});
//                      with "parts", content is [{type: "text", text}, ...parts]
//   {"toolResult": {content}, "tools"?: [tool]}   a frontend tool's answer:
//                      agent.addMessage({id, role: "tool", toolCallId: the newest
//                      assistant tool call without a result, content: JSON})
//                      then agent.runAgent({tools})
//   {"resolve": [{"id"|"index", "payload"} | {"id"|"index", "cancel": true}],
//    "bypassClientChecks"?: bool}
//        agent.runAgent({resume: [{interruptId, status, payload?}]}).
//        index = n-th entry of agent.pendingInterrupts. HttpAgent itself
//        refuses a resume that leaves a pending interrupt unaddressed (or
//        answers an expired one); "bypassClientChecks": true clears
//        agent.pendingInterrupts first so the server's answer can be tested.
//        "copilotkit": true resumes as CopilotKit's useInterrupt does (its
//        run-handler's pinRunIdOnWire): under the runId of the run that raised
//        the pending interrupts, after adding a tool message carrying the answer
//        ({"status": "cancelled"} for a cancel) for each tool_call interrupt.
//   {"raw": {runAgentParameters}}   agent.runAgent(params) verbatim.
//
// Result: {snapshots: [snapshot per step]} (+ timedOut: true, pendingStep on timeout)
//   snapshot = {step, action, runId, resume,
//     outcome: null | {type: "success", result?, pendingToolCallIds}
//                   | {type: "interrupt", interrupts} | {type: "cancelled"},
//     runError: RUN_ERROR event as seen by subscribers, or null,
//     error: {name, message, ...} when runAgent rejected (client refused the
//            input, HTTP error, verification failure...), or null,
//     messages, newMessages, state, pendingInterrupts,
//     events: [raw AG-UI events received during the step, in order],
//     requests: [{method, url, headers, body, status, contentType, events|text}],
//     logs: [{level, text}] (client console warnings/errors),
//     rolledBackMessage?: true (a send the client refused before making any
//       request; its user message is removed again)}
// Exit 0 unless the harness itself fails (1) or the job times out (2).
import {
  captureConsole, errorInfo, finish, newStepRecord, plain, readJob, settleStep, teeFetch,
} from './harness.mjs'

const sink = { logs: [] }
captureConsole(sink)

const job = await readJob()
const CLIENTS = { '1.0.0': '@ag-ui/client', '0.0.59': 'ag-ui-client-0059' }
const { HttpAgent, randomUUID } = await import(CLIENTS[job.client ?? '1.0.0'])
const timeoutMs = job.timeoutMs ?? 30000
const deadline = Date.now() + timeoutMs
const recorder = { current: newStepRecord() }
const snapshots = []
let interruptedRunId = null // the runId of the run input whose RUN_FINISHED left the pending interrupts

const timer = setTimeout(() => {
  const { pending, ...partial } = recorder.current
  finish({ snapshots, timedOut: true, pendingStep: partial }, 2)
}, timeoutMs)

const fetchImpl = teeFetch(recorder)
const agent = new HttpAgent({
  url: job.url,
  threadId: job.threadId,
  fetch: (url, init) => fetchImpl(url, init),
})

function resumeEntries(step) {
  const pending = agent.pendingInterrupts
  return step.resolve.map((t) => {
    const interruptId = t.id ?? pending[t.index]?.id
    if (interruptId === undefined) throw new Error(`no pending interrupt at index ${t.index}`)
    if (t.cancel) return { interruptId, status: 'cancelled' }
    return { interruptId, status: 'resolved', ...(t.payload !== undefined ? { payload: t.payload } : {}) }
  })
}

/** The id of the newest tool call in the transcript that has no tool message yet. */
function openToolCall() {
  const answered = new Set(agent.messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId))
  const calls = agent.messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : []))
  const open = calls.findLast((call) => !answered.has(call.id))
  if (open === undefined) throw new Error('no tool call waits for a result')
  return open.id
}

async function runStep(step, observed) {
  let params = step.tools ? { tools: step.tools } : {}
  if ('send' in step) {
    const content = step.parts ? [{ type: 'text', text: step.send }, ...step.parts] : step.send
    agent.addMessage({ id: randomUUID(), role: 'user', content })
  } else if ('toolResult' in step) {
    const toolCallId = openToolCall()
    agent.addMessage({ id: randomUUID(), role: 'tool', toolCallId, content: JSON.stringify(step.toolResult) })
  } else if ('resolve' in step) {
    params = { ...params, resume: resumeEntries(step) }
    if (step.copilotkit) {
      const byId = new Map(agent.pendingInterrupts.map((i) => [i.id, i]))
      for (const entry of params.resume) {
        const interrupt = byId.get(entry.interruptId)
        if (interrupt?.reason !== 'tool_call' || !interrupt.toolCallId) continue
        const answer = entry.status === 'cancelled' ? { status: 'cancelled' } : entry.payload
        const content = JSON.stringify(answer)
        agent.addMessage({ id: randomUUID(), role: 'tool', toolCallId: interrupt.toolCallId, content })
      }
      params.runId = interruptedRunId
    }
    if (step.bypassClientChecks) {
      // Restored below when the server does not finish the run.
      observed.bypassed = agent.pendingInterrupts
      agent.pendingInterrupts = []
    }
  } else if ('raw' in step) {
    params = step.raw
  } else {
    throw new Error(`unknown step: ${JSON.stringify(step)}`)
  }
  observed.resume = params.resume ?? null
  const subscriber = {
    onRunStartedEvent: ({ event }) => {
      observed.runId = event.runId
    },
    onRunFinishedEvent: (p) => {
      if (p.outcome === 'interrupt') interruptedRunId = p.input.runId // as CopilotKit remembers it
      observed.outcome =
        p.outcome === 'interrupt'
          ? { type: 'interrupt', interrupts: plain(p.interrupts) }
          : p.outcome === 'cancelled'
            ? { type: 'cancelled' }
            : {
                type: 'success',
                ...(p.result !== undefined ? { result: plain(p.result) } : {}),
                pendingToolCallIds: plain(p.pendingToolCallIds ?? []),
              }
    },
    onRunErrorEvent: ({ event }) => {
      observed.runError = plain(event)
    },
    onRunFailed: ({ error }) => {
      observed.runFailed = errorInfo(error)
    },
  }
  try {
    const result = await agent.runAgent(params, subscriber)
    observed.newMessages = plain(result?.newMessages ?? [])
  } finally {
    if (observed.bypassed && !observed.outcome) agent.pendingInterrupts = observed.bypassed
    // A send the client refused before any request leaves no trace.
    if ('send' in step && recorder.current.requests.length === 0) {
      agent.setMessages(agent.messages.slice(0, -1))
      observed.rolledBackMessage = true
    }
  }
}

try {
  for (const [index, step] of job.steps.entries()) {
    const rec = newStepRecord()
    recorder.current = rec
    sink.logs = rec.logs
    const observed = { runId: null, resume: null, outcome: null, runError: null, newMessages: [] }
    let error = null
    try {
      await runStep(step, observed)
    } catch (e) {
      if (e instanceof Error && /^unknown step/.test(e.message)) throw e
      error = errorInfo(e)
    }
    await settleStep(rec, Math.max(0, deadline - Date.now()))
    const { runFailed, bypassed, ...rest } = observed
    snapshots.push({
      step: index,
      action: Object.keys(step).find((k) => !['bypassClientChecks', 'tools', 'copilotkit'].includes(k)) ?? null,
      ...rest,
      error: error ?? runFailed ?? null,
      messages: plain(agent.messages),
      state: plain(agent.state),
      pendingInterrupts: plain(agent.pendingInterrupts),
      events: rec.events,
      requests: rec.requests,
      logs: rec.logs,
    })
  }
  clearTimeout(timer)
  finish({ snapshots })
} catch (error) {
  clearTimeout(timer)
  process.stderr.write(`harness error: ${error?.stack ?? error}\n`)
  finish({ snapshots, harnessError: errorInfo(error) }, 1)
}
