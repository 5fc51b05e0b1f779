// Validate AG-UI event streams as CopilotKit's AG-UI packages take them: @ag-ui/core 0.0.59's
// zod `EventSchemas` (its HttpAgent parses every event with it, and a failure ends the run)
// and @ag-ui/client 0.0.59's `verifyEvents` (the order rules its HttpAgent enforces).
// tests/node/validate_events.mjs does the same for 1.0.0.
//
//   node validate_events.mjs < input.json > result.json
//
// Input:  {streams: [[event, ...], ...]}  each inner array one SSE response's events
// Output: {ok: bool, problems: [{stream, index, type, problem, source}]}
//         source: "schema"  an EventSchemas issue: the event's type and the field's path
//                 "client"  verifyEvents refused the stream at that event
import { verifyEvents } from '@ag-ui/client'
import { EventSchemas } from '@ag-ui/core'
import { from, lastValueFrom, tap, toArray } from 'rxjs'
import { errorInfo, finish, readJob } from '../node/harness.mjs'

async function clientProblems(events) {
  const out = []
  let index = -1
  try {
    await lastValueFrom(from(events).pipe(tap(() => index++), verifyEvents(), toArray()))
  } catch (error) {
    out.push([index, `rejected: ${error?.message ?? String(error)}`])
  }
  return out
}

try {
  const job = await readJob()
  const problems = []
  for (const [stream, events] of (job.streams ?? []).entries()) {
    const parsed = []
    events.forEach((event, index) => {
      const result = EventSchemas.safeParse(event)
      if (result.success) return parsed.push(result.data)
      for (const issue of result.error.issues) {
        const path = issue.path.join('/')
        problems.push({ stream, index, type: event?.type ?? null, problem: `/${path}: ${issue.message}`, source: 'schema' })
      }
    })
    if (parsed.length === events.length) {
      for (const [index, problem] of await clientProblems(parsed)) {
        problems.push({ stream, index, type: events[index]?.type ?? null, problem, source: 'client' })
      }
    }
  }
  finish({ ok: problems.length === 0, problems })
} catch (error) {
  process.stderr.write(`harness error: ${error?.stack ?? error}\n`)
  finish({ ok: false, problems: [], harnessError: errorInfo(error) }, 1)
}
