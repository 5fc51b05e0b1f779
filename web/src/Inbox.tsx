import { useCallback, useEffect, useState } from 'react'
import { type Headers, UNAUTHORIZED } from './Auth'
import { Chat } from './Chat'

export const PRINCIPALS = ['alice', 'bob', 'carol', 'dave', 'erin', 'dana']

type Json = Record<string, any>
type Loaded =
  | { state: 'loading' }
  | { state: 'missing' } // the approvals API is not served by this gateway
  | { state: 'error'; message: string }
  | { state: 'unauthorized' }
  | { state: 'ok'; items: Json[] }

// The approvals API (gateway/routes/approvals.py): GET /approvals -> {items: [ApprovalItem], next},
// GET /approvals/{chain} -> ChainView {steps: [{name, status, quorum, slots}], audit: [...]}.
const chainIdOf = (item: Json): string => item.chain ?? item.chain_id ?? item.chainId ?? item.id
const listOf = (body: any): Json[] => (Array.isArray(body) ? body : (body?.items ?? []))

/**
 * Pending approvals for the current principal (GET /approvals?assignee=P&status=pending,
 * then GET /approvals/{chain_id} for progress and audit), and the principal's inbox
 * thread (`inbox:{principal}` on the `inbox` agent), where the approvals are answered.
 * The thread shows what waits as soon as it is opened (its hydrate: the server delivers an
 * offer when it arrives, no message needs to be sent); Refresh reads both again.
 * `headers` authenticate every request (an API key, or the dev `X-Principal`).
 */
export function Inbox({ principal, headers }: { principal: string; headers: Headers }) {
  const [loaded, setLoaded] = useState<Loaded>({ state: 'loading' })
  // A new Chat hydrates the thread again: offers that arrived since it was opened show.
  const [opened, setOpened] = useState(0)

  const load = useCallback(async () => {
    setLoaded({ state: 'loading' })
    try {
      const query = new URLSearchParams({ assignee: principal, status: 'pending' })
      const response = await fetch(`/approvals?${query}`, { headers })
      if (response.status === 401) return setLoaded({ state: 'unauthorized' })
      if (response.status === 404 || response.status === 405) return setLoaded({ state: 'missing' })
      if (!response.ok) return setLoaded({ state: 'error', message: `${response.status} ${response.statusText}` })
      setLoaded({ state: 'ok', items: listOf(await response.json()) })
    } catch (error) {
      setLoaded({ state: 'error', message: String(error) })
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [principal, JSON.stringify(headers)])

  useEffect(() => {
    void load()
  }, [load])

  return (
    <div className="inbox">
      <section aria-labelledby="approvals-heading">
        <div className="row">
          <h2 id="approvals-heading">Pending approvals</h2>
          <button
            type="button"
            onClick={() => {
              void load()
              setOpened((n) => n + 1)
            }}
          >
            Refresh
          </button>
        </div>
        {loaded.state === 'loading' && <p role="status">Loading…</p>}
        {loaded.state === 'missing' && (
          <p className="muted" data-testid="approvals-missing">
            This gateway does not serve the approvals API yet; the items waiting for {principal} are in the
            inbox thread below.
          </p>
        )}
        {loaded.state === 'unauthorized' && (
          <p className="error" role="alert">
            {UNAUTHORIZED}
          </p>
        )}
        {loaded.state === 'error' && (
          <p className="error" role="alert">
            Could not load approvals: {loaded.message}
          </p>
        )}
        {loaded.state === 'ok' &&
          (loaded.items.length === 0 ? (
            <p className="muted">Nothing is waiting for {principal}.</p>
          ) : (
            <ul className="approvals">
              {loaded.items.map((item) => (
                <ApprovalRow key={chainIdOf(item)} item={item} headers={headers} />
              ))}
            </ul>
          ))}
      </section>

      <section aria-labelledby="thread-heading">
        <h2 id="thread-heading">Inbox thread</h2>
        <Chat
          key={`${principal}-${opened}`}
          agent="inbox"
          threadId={`inbox:${principal}`}
          headers={headers}
          label={`${principal}'s inbox`}
          placeholder="Ask the inbox for new items"
          quickPrompts={['Check my inbox']}
        />
      </section>
    </div>
  )
}

const DONE = ['approved', 'rejected', 'cancelled']

function ApprovalRow({ item, headers }: { item: Json; headers: Headers }) {
  const chainId = chainIdOf(item)
  const [detail, setDetail] = useState<Json | null>(null)
  const [open, setOpen] = useState(false)
  useEffect(() => {
    void fetch(`/approvals/${encodeURIComponent(chainId)}`, { headers })
      .then((response) => (response.ok ? response.json() : null))
      .then(setDetail)
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [chainId])
  const steps: Json[] = detail?.steps ?? []
  const audit: Json[] = detail?.audit ?? []
  const done = steps.filter((step) => DONE.includes(step.status)).length
  const request = item.request ?? {}
  const headingId = `chain-${chainId}`
  return (
    <li className="card approval" data-testid="approval" data-chain={chainId} aria-labelledby={headingId}>
      <h3 id={headingId}>{item.title || chainId}</h3>
      <p className="muted">
        {item.requester ? `From ${item.requester}. ` : ''}Your step: <strong>{item.step}</strong>
        {item.expiresAt ? ` — answer before ${new Date(item.expiresAt).toLocaleString()}` : ''}
      </p>
      {Object.keys(request).length > 0 && (
        <dl className="args">
          {Object.entries(request).map(([key, value]) => (
            <div key={key}>
              <dt>{key}</dt>
              <dd>{typeof value === 'string' ? value : JSON.stringify(value)}</dd>
            </div>
          ))}
        </dl>
      )}
      {steps.length > 0 && (
        <>
          <label className="progress">
            Chain progress: step {Math.min(done + 1, steps.length)} of {steps.length}
            <progress max={steps.length} value={done} />
          </label>
          <ol className="steps">
            {steps.map((step) => (
              <li key={step.name} data-status={step.status}>
                <strong>{step.name}</strong> ({step.status}
                {step.quorum > 1 ? `, ${step.quorum} of ${step.approvers?.length ?? '?'}` : ''})
                {step.slots?.length > 0 &&
                  ': ' + step.slots.map((slot: Json) => `${slot.assignee} ${slot.status}`).join(', ')}
              </li>
            ))}
          </ol>
        </>
      )}
      <div className="actions">
        <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'Hide' : 'Show'} audit trail
        </button>
      </div>
      {open &&
        (audit.length === 0 ? (
          <p className="muted">{detail ? 'No audit entries.' : 'Loading…'}</p>
        ) : (
          <ol className="audit" aria-label="Audit trail">
            {audit.map((entry, index) => (
              <li key={index}>
                <time dateTime={entry.at}>{new Date(entry.at).toLocaleString()}</time> {entry.kind}
                {entry.step ? ` (${entry.step})` : ''}
                {entry.principal ? ` by ${entry.principal}` : ''}
                {entry.decision ? `: ${entry.decision}` : ''}
                {entry.note ? ` — ${entry.note}` : ''}
              </li>
            ))}
          </ol>
        ))}
      <p className="muted">Answer it in your inbox thread below ({item.thread}).</p>
    </li>
  )
}
