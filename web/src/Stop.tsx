import { useState } from 'react'

/**
 * Stopping a run. Closing the page (or the stream) does not stop a durable run: it goes on,
 * and a reload joins it again. Stop asks the server to end it
 * (`POST /agents/{agent}/threads/{threadId}/runs/{runId}/cancel`); the run's own stream then
 * ends with `RUN_ERROR` `RUN_CANCELLED`, and what it had written stays, marked stopped.
 */

/** The metadata key the server puts on a message its run was stopped while writing. */
export const STOPPED_KEY = 'ag-ui-temporal:stopped'

export function wasStopped(message: { metadata?: Record<string, unknown> }) {
  return message.metadata?.[STOPPED_KEY] === true
}

/** The error TanStack reports for a run that was stopped: no failure, nothing to alert. */
export function isStopped(error: Error | undefined) {
  return (error as (Error & { code?: string }) | undefined)?.code === 'RUN_CANCELLED'
}

type Props = { agent: string; threadId: string; runId: string; headers?: Record<string, string> }

export function StopButton({ agent, threadId, runId, headers }: Props) {
  const [stopping, setStopping] = useState(false)
  const stop = async () => {
    setStopping(true)
    const [a, t, r] = [agent, threadId, runId].map(encodeURIComponent)
    try {
      // 200: the run's stream ends `RUN_CANCELLED`; 409: it had just ended; 403: another
      // member's run (only its sender or an admin stops it); 404: not a run we may see.
      await fetch(`/agents/${a}/threads/${t}/runs/${r}/cancel`, { method: 'POST', headers: headers ?? {} })
    } catch {
      // the server was not reached: the run goes on, and Stop can be pressed again
    } finally {
      setStopping(false)
    }
  }
  return (
    <button type="button" className="danger stop" onClick={() => void stop()} disabled={stopping}>
      {stopping ? 'Stopping…' : 'Stop'}
    </button>
  )
}
