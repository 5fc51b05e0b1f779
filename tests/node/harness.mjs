// Shared plumbing for the Node test drivers (tanstack_chat.mjs, agui_agent.mjs,
// validate_events.mjs, tool_approval_*.mjs): stdin/stdout JSON, a fetch wrapper that tees SSE
// bodies, console capture, and a global timeout.

export async function readJob() {
  const chunks = []
  for await (const chunk of process.stdin) chunks.push(chunk)
  return JSON.parse(Buffer.concat(chunks).toString('utf8'))
}

/** Print one JSON document on stdout, then exit with `code`. */
export function finish(result, code = 0) {
  process.stdout.write(JSON.stringify(result) + '\n', () => process.exit(code))
}

/**
 * Keep stdout for the result: libraries that console.log go to stderr, and
 * warnings/errors are also collected into `sink.logs` (the current step's).
 */
export function captureConsole(sink) {
  const original = { warn: console.warn, error: console.error }
  const record = (level) => (...args) => {
    const text = args
      .map((a) => (typeof a === 'string' ? a : a instanceof Error ? a.message : safeJson(a)))
      .join(' ')
    sink.logs?.push({ level, text })
    original.error(`[${level}]`, ...args)
  }
  console.log = record('log')
  console.info = record('info')
  console.debug = () => {}
  console.warn = record('warn')
  console.error = record('error')
}

function safeJson(value) {
  try {
    return JSON.stringify(value)
  } catch {
    return String(value)
  }
}

/** Parse SSE text into `data:` payloads (one JSON object per frame/line). */
export function parseSse(text) {
  return parseSseFrames(text).map((frame) => frame.event)
}

/** Parse SSE text into frames `{id, event}`: `id` is the frame's `id:` (null if none). */
export function parseSseFrames(text) {
  const frames = []
  for (const frame of text.split(/\r?\n\r?\n/)) {
    const lines = frame.split(/\r?\n/)
    const data = lines
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
    if (data.length === 0) continue
    const idLine = lines.findLast((line) => line === 'id' || line.startsWith('id:'))
    const id = idLine === undefined ? null : idLine.slice(3).replace(/^ /, '')
    const joined = data.join('\n')
    try {
      frames.push({ id, event: JSON.parse(joined) })
    } catch {
      frames.push({ id, event: { __unparsed: joined } })
    }
  }
  return frames
}

/**
 * A fetch that records every request and a copy of every response body into
 * `recorder.current` (an object with `requests`, `events`, `pending`).
 * Each request entry: {method, url, headers, body, status, contentType,
 * events + ids (SSE responses: ids[i] is the `id:` of events[i], or null) |
 * text (other responses), fetchError?, readError? (the body broke off)}.
 */
export function teeFetch(recorder) {
  return async (url, init = {}) => {
    const step = recorder.current
    const entry = {
      method: init.method ?? 'GET',
      url: String(url),
      headers: Object.fromEntries(new Headers(init.headers ?? {}).entries()),
      body: parseBody(init.body),
    }
    step.requests.push(entry)
    let response
    try {
      response = await fetch(url, init)
    } catch (error) {
      entry.fetchError = error?.message ?? String(error)
      throw error
    }
    entry.status = response.status
    entry.contentType = response.headers.get('content-type')
    if (!response.body) return response
    const [mine, copy] = response.body.tee()
    step.pending.push(collect(copy, entry, step))
    return new Response(mine, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    })
  }
}

function parseBody(body) {
  if (typeof body !== 'string') return body ?? null
  try {
    return JSON.parse(body)
  } catch {
    return body
  }
}

async function collect(stream, entry, step) {
  const isSse = /text\/event-stream/.test(entry.contentType ?? '')
  if (isSse) {
    entry.events = []
    entry.ids = []
  }
  const decoder = new TextDecoder()
  let buffer = ''
  let text = ''
  // Parse incrementally so a timed-out step still shows what had arrived.
  const flush = (final) => {
    const frames = buffer.split(/\r?\n\r?\n/)
    buffer = final ? '' : frames.pop()
    for (const { id, event } of parseSseFrames(frames.join('\n\n'))) {
      entry.events.push(event)
      entry.ids.push(id)
      step.events.push(event)
    }
  }
  try {
    const reader = stream.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      const chunk = done ? decoder.decode() : decoder.decode(value, { stream: true })
      if (isSse) {
        buffer += chunk
        flush(done)
      } else text += chunk
      if (done) break
    }
  } catch (error) {
    entry.readError = error?.message ?? String(error)
  }
  if (!isSse) entry.text = text
}

export function newStepRecord(extra = {}) {
  return { requests: [], events: [], pending: [], logs: [], ...extra }
}

/** Wait for every teed body of a step (bounded, in case a stream never ends). */
export async function settleStep(step, ms = 5000) {
  await Promise.race([Promise.all(step.pending), sleep(ms)])
  delete step.pending
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

export async function waitFor(predicate, { timeoutMs, intervalMs = 10, stableFor = 3 }) {
  const deadline = Date.now() + timeoutMs
  let stable = 0
  while (Date.now() < deadline) {
    stable = predicate() ? stable + 1 : 0
    if (stable >= stableFor) return true
    await sleep(intervalMs)
  }
  return false
}

/** JSON round-trip (Dates -> ISO strings, functions dropped). */
export const plain = (value) => (value === undefined ? null : JSON.parse(JSON.stringify(value)))

/**
 * A bound interrupt item (ChatClient.getInterrupts() / InterruptManager) as plain JSON.
 * `descriptor`: the AG-UI interrupt as received, where the item lacks its toolCallId.
 */
export function describeItem(item, descriptor) {
  return {
    id: item.id,
    kind: item.kind,
    canResolve: item.canResolve,
    status: item.status,
    reason: item.reason ?? null,
    message: item.message ?? null,
    toolCallId: item.toolCallId ?? descriptor?.toolCallId ?? null,
    toolName: item.toolName ?? null,
    originalArgs: plain(item.originalArgs),
    error: plain(item.error),
    errors: plain(item.errors ?? []),
    responseSchema: plain(item.responseSchema),
    binding: plain(item.binding),
    resolvable: typeof item.resolveInterrupt === 'function',
    metadata: plain(item.metadata),
    // AG-UI's `subagentRunId`: on the item (TanStack keeps no such field) and as it arrived
    subagentRunId: item.subagentRunId ?? null,
    wireSubagentRunId: descriptor?.subagentRunId ?? null,
  }
}

export function errorInfo(error) {
  if (error == null) return null
  if (error instanceof Error) {
    const out = { name: error.name, message: error.message }
    if (error.code !== undefined) out.code = error.code
    if (error.status !== undefined) out.status = error.status
    if (error.payload !== undefined) out.payload = plain(error.payload)
    return out
  }
  return { message: typeof error === 'string' ? error : safeJson(error), value: plain(error) }
}
