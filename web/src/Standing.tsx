import { useCallback, useEffect, useState } from 'react'

/**
 * Standing decisions: an approval answered "from now on" also answers the later calls of that
 * tool in this conversation, until it expires or is revoked. The server offers it in the
 * approval's `responseSchema` (a `standing` property in its envelopes, up to the agent's
 * longest), lists a thread's (`GET /agents/{agent}/threads/{threadId}/standing`) and revokes
 * one (`DELETE .../standing/{id}`): the calls it covered ask again.
 */

export type Decision = {
  id: string
  tool: string
  args?: unknown
  anyArgs: boolean
  approved: boolean
  by?: string | null
  expiresAt: string
}

/** The longest standing decision an approval's schema offers (seconds), if it offers one. */
export function standingOffered(schema: unknown): number | undefined {
  const envelopes = (schema as { oneOf?: Array<{ properties?: Record<string, any> }> } | undefined)?.oneOf
  const standing = envelopes?.[0]?.properties?.standing
  const longest = standing?.properties?.expiresInSeconds?.maximum
  return typeof longest === 'number' ? longest : undefined
}

function url(agent: string, threadId: string, id?: string) {
  const base = `/agents/${encodeURIComponent(agent)}/threads/${encodeURIComponent(threadId)}/standing`
  return id ? `${base}/${encodeURIComponent(id)}` : base
}

function until(iso: string) {
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
}

type Props = { agent: string; threadId: string; headers?: Record<string, string>; version: string }

/** The thread's standing decisions, read again whenever `version` changes (a run ended). */
export function StandingDecisions({ agent, threadId, headers, version }: Props) {
  const [decisions, setDecisions] = useState<Decision[]>([])
  const [problem, setProblem] = useState<string | null>(null)
  const [offered, setOffered] = useState(false)
  useEffect(() => {
    // only an agent that offers them has any: one look at its capabilities, no list otherwise
    let live = true
    fetch(`/agents/${encodeURIComponent(agent)}/capabilities`, { headers: headers ?? {} })
      .then((response) => (response.ok ? response.json() : null))
      .then((capabilities) => live && setOffered(Boolean(capabilities?.custom?.['ag-ui-temporal:standing'])))
      .catch(() => undefined)
    return () => {
      live = false
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [agent, JSON.stringify(headers ?? {})])
  const load = useCallback(async () => {
    if (!offered) return
    try {
      const response = await fetch(url(agent, threadId), { headers: headers ?? {} })
      setDecisions(response.ok ? ((await response.json()).standing as Decision[]) : [])
    } catch {
      // the server was not reached: what was shown stays until the next read
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [offered, agent, threadId, JSON.stringify(headers ?? {})])

  useEffect(() => {
    void load()
  }, [load, version])

  const revoke = async (decision: Decision) => {
    setProblem(null)
    try {
      const response = await fetch(url(agent, threadId, decision.id), { method: 'DELETE', headers: headers ?? {} })
      // 404: it expired, or was revoked elsewhere, meanwhile: gone either way
      if (!response.ok && response.status !== 404) setProblem('The decision could not be revoked. Please try again.')
    } catch {
      setProblem('The server could not be reached; the decision still stands.')
    }
    await load()
  }

  if (decisions.length === 0 && !problem) return null
  return (
    <section className="standing" aria-labelledby={`standing-${threadId}`} data-testid="standing">
      <h2 id={`standing-${threadId}`} className="group-title">
        Decided from now on
      </h2>
      <ul>
        {decisions.map((decision) => (
          <li key={decision.id} data-testid="standing-decision">
            <span>
              <strong>{decision.approved ? 'Approve' : 'Reject'}</strong> {decision.tool}
              {decision.anyArgs ? ' (any arguments)' : ` with ${JSON.stringify(decision.args)}`} until{' '}
              <time dateTime={decision.expiresAt}>{until(decision.expiresAt)}</time>
            </span>{' '}
            <button type="button" onClick={() => void revoke(decision)}>
              Revoke
            </button>
          </li>
        ))}
      </ul>
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
    </section>
  )
}
