import { useEffect, useId, useState } from 'react'
import type { Headers } from './Auth'
import {
  decide,
  fetchHistory,
  nameOf,
  NEED_DELEGATE,
  Refusal,
  when,
  type HistoryLine,
  type InboxItem,
} from './inboxApi'
import { SchemaForm } from './SchemaForm'
import { ANSWER, asForm, fieldsOf, humanize, type Schema } from './schema'

type Props = {
  item: InboxItem
  names: Record<string, string>
  threadId: string
  headers: Headers
  now: number
  /** The item was answered: read the list again. */
  onAnswered: () => void
}

const SEAT_WORDS: Record<string, string> = {
  waiting: 'waiting',
  approved: 'approved',
  rejected: 'rejected',
  delegated: 'handed on',
  cancelled: 'cancelled',
  closed: 'no longer asked',
}

const DECISION_FIELDS = ['decision', 'comment', 'delegateTo']

/** Whether an item's schema is the chain's decision (approve / reject / delegate, a comment):
 * then it gets buttons; anything more gets the generated form. */
function isDecision(schema: Schema | undefined): boolean {
  const properties = schema?.properties
  const options = properties?.decision?.enum
  if (!properties || !Array.isArray(options)) return false
  return (
    Object.keys(properties).every((key) => DECISION_FIELDS.includes(key)) &&
    options.includes('approve') &&
    options.includes('reject') &&
    options.every((option) => ['approve', 'reject', 'delegate'].includes(String(option)))
  )
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)

function titleOf(item: InboxItem): string {
  const title = item.approval?.title ?? item.message ?? humanize(item.reason)
  return capitalized(title || 'Request')
}

/** One item of the task list: what it is, its step and deadline, who else was asked, and
 * the actions (waiting) or what the person answered (answered). */
export function TaskCard({ item, names, threadId, headers, now, onAnswered }: Props) {
  const headingId = useId()
  const approval = item.approval ?? undefined
  const past = item.expiresAt ? Date.parse(item.expiresAt) <= now : false
  const waiting = item.status === 'waiting' && !past
  const shownStatus = item.status === 'waiting' && past ? 'expired' : item.status
  return (
    <li
      className={`card task is-${shownStatus}`}
      data-testid="task"
      data-status={shownStatus}
      aria-labelledby={headingId}
    >
      <h3 id={headingId}>{titleOf(item)}</h3>
      {approval?.delegatedFrom && <p className="muted">{nameOf(approval.delegatedFrom, names)} handed this to you.</p>}
      {approval?.escalation && <p className="muted">Escalated to you: nobody answered in time.</p>}
      <Facts item={item} names={names} detailed={item.status === 'waiting'} past={past} />
      {waiting ? (
        <Actions item={item} names={names} threadId={threadId} headers={headers} onAnswered={onAnswered} />
      ) : (
        <Outcome item={item} names={names} past={past} />
      )}
      {approval && <History chainId={approval.chainId} headers={headers} version={`${item.status}/${seatsKey(item)}`} />}
    </li>
  )
}

const seatsKey = (item: InboxItem) => (item.approval?.seats ?? []).map((s) => `${s.principal}:${s.status}`).join(',')

function Facts({ item, names, detailed, past }: { item: InboxItem; names: Record<string, string>; detailed: boolean; past: boolean }) {
  const approval = item.approval
  const request = approval?.request ?? {}
  const others = approval?.seats ?? []
  return (
    <>
      {approval && (
        <p className="meta">
          {approval.step && (
            <span>
              Step: <strong>{approval.step}</strong>
            </span>
          )}
          {approval.requester && (
            <span>
              From: <strong>{nameOf(approval.requester, names)}</strong>
            </span>
          )}
        </p>
      )}
      {!approval && item.message && titleOf(item) !== capitalized(item.message) && <p>{item.message}</p>}
      {detailed && Object.keys(request).length > 0 && (
        <dl className="args">
          {Object.entries(request).map(([key, value]) => (
            <div key={key}>
              <dt>{humanize(key)}</dt>
              <dd>{typeof value === 'string' || typeof value === 'number' ? String(value) : JSON.stringify(value)}</dd>
            </div>
          ))}
        </dl>
      )}
      {detailed && item.expiresAt && (
        <p className={past ? 'deadline error' : 'deadline'}>
          Answer by <time dateTime={item.expiresAt}>{when(item.expiresAt)}</time>
          {past && <strong> (expired)</strong>}
        </p>
      )}
      {detailed && others.length > 0 && (
        <p className="also">
          Also asked:{' '}
          {others.map((seat) => `${nameOf(seat.principal, names)} (${SEAT_WORDS[seat.status] ?? seat.status})`).join(', ')}
        </p>
      )}
    </>
  )
}

function Outcome({ item, names, past }: { item: InboxItem; names: Record<string, string>; past: boolean }) {
  const answer = item.answer
  const at = answer?.at ?? item.endedAt ?? (item.status !== 'withdrawn' ? item.expiresAt : null)
  const on = at ? ` on ${when(at)}` : ''
  const by = answer?.via === 'link' ? ' (by link)' : ''
  const payload = answer?.payload
  let text: string
  if (item.status === 'resolved') {
    const decision = payload?.decision
    text =
      decision === 'approve'
        ? `You approved${on}${by}`
        : decision === 'reject'
          ? `You rejected${on}${by}`
          : decision === 'delegate'
            ? `You delegated to ${nameOf(payload?.delegateTo, names)}${on}${by}`
            : `You answered${on}${by}`
  } else if (item.status === 'cancelled') text = `You declined${on}${by}`
  else if (item.status === 'withdrawn') text = 'Withdrawn: no longer needed'
  else text = `Expired${past || item.status === 'expired' ? on : ''}`
  const comment = typeof payload?.comment === 'string' && payload.comment.trim() ? payload.comment : null
  const generic = item.status === 'resolved' && payload && typeof payload === 'object' && !('decision' in payload)
  return (
    <div className="outcome" data-testid="outcome">
      <p className="status-line">
        <strong>{text}.</strong>
      </p>
      {comment && <p className="muted">Your note: “{comment}”</p>}
      {generic && Object.keys(payload).length > 0 && (
        <dl className="args">
          {Object.entries(payload as Record<string, unknown>).map(([key, value]) => (
            <div key={key}>
              <dt>{humanize(key)}</dt>
              <dd>{typeof value === 'string' ? value : JSON.stringify(value)}</dd>
            </div>
          ))}
        </dl>
      )}
    </div>
  )
}

type Sending = null | 'approve' | 'reject' | 'delegate' | 'form' | 'decline'

function Actions({ item, names, threadId, headers, onAnswered }: Omit<Props, 'now'>) {
  const ids = useId()
  const [comment, setComment] = useState('')
  const [picking, setPicking] = useState(false)
  const [delegateTo, setDelegateTo] = useState('')
  const [sending, setSending] = useState<Sending>(null)
  const [sent, setSent] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const schema = (item.responseSchema ?? undefined) as Schema | undefined
  const form = asForm(schema)
  const delegates = item.approval?.delegates ?? []
  const busy = sending !== null || sent

  const send = async (kind: Exclude<Sending, null>, body: { status: 'resolved' | 'cancelled'; payload?: unknown }) => {
    setSending(kind)
    setError(null)
    try {
      await decide(headers, threadId, item.id, body)
      setSent(true)
      onAnswered()
    } catch (err) {
      // What the person typed stays: only the message changes.
      const refusal = err instanceof Refusal ? err : null
      setError(refusal?.code === 'INVALID_PAYLOAD' && kind === 'delegate' ? NEED_DELEGATE : (refusal?.message ?? String(err)))
    } finally {
      setSending(null)
    }
  }
  const decision = (choice: 'approve' | 'reject' | 'delegate', extra: Record<string, unknown> = {}) => {
    const note = comment.trim()
    void send(choice, { status: 'resolved', payload: { decision: choice, ...(note ? { comment: note } : {}), ...extra } })
  }

  let body: React.ReactNode
  if (isDecision(schema)) {
    body = (
      <>
        <div className="field">
          <label htmlFor={`${ids}-comment`}>Comment (optional)</label>
          <textarea
            id={`${ids}-comment`}
            rows={2}
            value={comment}
            disabled={busy}
            onChange={(event) => setComment(event.target.value)}
          />
        </div>
        <div className="actions">
          <button type="button" className="primary" disabled={busy} onClick={() => decision('approve')}>
            Approve
          </button>
          <button type="button" className="danger" disabled={busy} onClick={() => decision('reject')}>
            Reject
          </button>
          {delegates.length > 0 && (
            <button
              type="button"
              disabled={busy}
              aria-expanded={picking}
              aria-controls={`${ids}-picker`}
              onClick={() => setPicking(!picking)}
            >
              Delegate…
            </button>
          )}
        </div>
        {picking && (
          <div id={`${ids}-picker`} className="delegate" role="group" aria-labelledby={`${ids}-delegate-title`}>
            <p id={`${ids}-delegate-title`} className="group-title">
              Hand this request to someone else
            </p>
            <div className="field">
              <label htmlFor={`${ids}-delegate`}>Delegate to</label>
              <select
                id={`${ids}-delegate`}
                value={delegateTo}
                disabled={busy}
                onChange={(event) => setDelegateTo(event.target.value)}
              >
                <option value="">Choose a person…</option>
                {delegates.map((principal) => (
                  <option key={principal} value={principal}>
                    {nameOf(principal, names)}
                  </option>
                ))}
              </select>
            </div>
            <div className="actions">
              <button
                type="button"
                className="primary"
                disabled={busy}
                onClick={() => (delegateTo ? decision('delegate', { delegateTo }) : setError(NEED_DELEGATE))}
              >
                Confirm delegation
              </button>
              <button type="button" disabled={busy} onClick={() => setPicking(false)}>
                Cancel
              </button>
            </div>
          </div>
        )}
      </>
    )
  } else if (form && fieldsOf(form.schema).length > 0) {
    body = (
      <SchemaForm
        schema={form.schema}
        submitLabel="Send answer"
        disabled={busy}
        onSubmit={(value) => void send('form', { status: 'resolved', payload: form.bare ? value[ANSWER] : value })}
        secondary={
          <button type="button" disabled={busy} onClick={() => void send('decline', { status: 'cancelled' })}>
            Decline
          </button>
        }
      />
    )
  } else {
    body = (
      <div className="actions">
        <button type="button" className="primary" disabled={busy} onClick={() => void send('form', { status: 'resolved', payload: {} })}>
          Done
        </button>
        <button type="button" disabled={busy} onClick={() => void send('decline', { status: 'cancelled' })}>
          Decline
        </button>
      </div>
    )
  }
  return (
    <div className="task-actions">
      {body}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {(sending || sent) && (
        <p className="muted" role="status">
          {sent ? 'Answer sent.' : 'Sending…'}
        </p>
      )}
    </div>
  )
}

/** The chain's history in sentences (GET /approvals/{chain}), read when opened and again
 * while open whenever the item changes. */
function History({ chainId, headers, version }: { chainId: string; headers: Headers; version: string }) {
  const [open, setOpen] = useState(false)
  const [lines, setLines] = useState<HistoryLine[] | null>(null)
  const [failed, setFailed] = useState<string | null>(null)
  useEffect(() => {
    if (!open) return
    let live = true
    fetchHistory(headers, chainId)
      .then((read) => live && (setLines(read), setFailed(null)))
      .catch((err) => live && setFailed(err instanceof Refusal ? err.message : 'The history cannot be shown.'))
    return () => {
      live = false
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [open, chainId, version])
  return (
    <details className="history" onToggle={(event) => setOpen((event.currentTarget as HTMLDetailsElement).open)}>
      <summary>History</summary>
      {failed ? (
        <p className="error">{failed}</p>
      ) : lines === null ? (
        <p className="muted">Loading…</p>
      ) : (
        <ol aria-label="History">
          {lines.map((line, index) => (
            <li key={index}>
              <time dateTime={line.at}>{when(line.at)}</time> {line.text}
            </li>
          ))}
        </ol>
      )}
    </details>
  )
}
