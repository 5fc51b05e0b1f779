import { useEffect, useId, useState } from 'react'
import { sendEmailInput } from '../../examples/tools'
import { SchemaForm } from './SchemaForm'
import { ANSWER, asForm, editedArgsSchema, fieldsOf, humanize, type Schema } from './schema'
import { standingOffered } from './Standing'

/** What the cards read from a TanStack bound interrupt item (tool-approval, generic, unbound). */
export type Item = {
  id: string
  kind: 'tool-approval' | 'generic' | 'unbound' | string
  reason: string
  message?: string
  responseSchema?: Readonly<Record<string, unknown>>
  expiresAt?: string
  metadata?: Readonly<Record<string, unknown>>
  status: string
  canResolve: boolean
  errors: ReadonlyArray<{ code: string; message: string; path?: ReadonlyArray<string | number> }>
  toolName?: string
  originalArgs?: unknown
  cancel?: () => void
  resolveInterrupt?: (...args: any[]) => void
}

/** The time now, again every `intervalMs` (deadlines shown as they pass). */
export function useNow(intervalMs = 1000) {
  const [now, setNow] = useState(() => Date.now())
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), intervalMs)
    return () => clearInterval(timer)
  }, [intervalMs])
  return now
}

function remaining(ms: number) {
  const s = Math.max(0, Math.floor(ms / 1000))
  const d = Math.floor(s / 86400)
  const h = Math.floor((s % 86400) / 3600)
  const m = Math.floor((s % 3600) / 60)
  const sec = s % 60
  if (d > 0) return `${d}d ${h}h ${m}m`
  if (h > 0) return `${h}h ${m}m ${sec}s`
  return `${m}m ${String(sec).padStart(2, '0')}s`
}

function Countdown({ expiresAt, now }: { expiresAt: string; now: number }) {
  const left = Date.parse(expiresAt) - now
  const when = new Date(expiresAt).toLocaleString()
  if (left <= 0) return null
  // Announced once (aria-live="off" on the ticking text), the deadline itself is in the title.
  return (
    <p className="countdown">
      <span className="sr-only">Answer before {when}. </span>
      <span aria-hidden="true" title={`Answer before ${when}`}>
        Time left: {remaining(left)}
      </span>
    </p>
  )
}

const statusText: Record<string, string> = {
  staged: 'Answered — sent together with the other pending items',
  validating: 'Checking…',
  submitting: 'Sending…',
}

/** Who asks when a sub-agent asks (the interrupt's `subagentRunId` is that agent's run). */
type Subagent = { name?: string; runId?: string; toolName?: string; arguments?: unknown }

function subagentOf(item: Item): Subagent | undefined {
  return item.metadata?.['ag-ui-temporal:subagent'] as Subagent | undefined
}

/**
 * Past its deadline (or refused as expired): the server settled it as expired, or will as
 * its timer fires. It takes no answer and holds up nothing: the composer stays open.
 */
export function isExpired(item: Item, now: number) {
  return (
    (item.expiresAt !== undefined && Date.parse(item.expiresAt) <= now) ||
    item.errors.some((error) => error.code === 'expired')
  )
}

export function InterruptCard({ item, index, total }: { item: Item; index: number; total: number }) {
  const now = useNow()
  const headingId = useId()
  const expired = isExpired(item, now)
  const busy = item.status === 'submitting' || item.status === 'validating'
  const answered = item.status === 'staged'
  const serverErrors = item.errors.filter((error) => error.code !== 'expired')
  const subagent = subagentOf(item)
  const title =
    item.reason === 'tool_call'
      ? `Approve ${item.toolName ?? subagent?.toolName ?? 'tool call'}?`
      : item.reason === 'input_required'
        ? 'Information needed'
        : item.reason === 'confirmation'
          ? 'Please confirm'
          : item.reason === 'temporal:approval'
            ? 'Approval requested'
            : humanize(item.reason)
  const approval = item.metadata?.['ag-ui-temporal:approval'] as
    | { chainId?: string; step?: string; requester?: string; request?: Record<string, unknown> }
    | undefined

  let body: React.ReactNode
  if (item.kind === 'unbound' || !item.resolveInterrupt) {
    body = <p className="muted">This pause belongs to another system and cannot be answered here.</p>
  } else if (expired) {
    body = (
      <div className="expired">
        <p>
          <strong>Expired.</strong> The deadline passed{item.expiresAt ? ` (${new Date(item.expiresAt).toLocaleString()})` : ''};
          it can no longer be answered, and it no longer holds up the conversation.
        </p>
        <div className="actions">
          <button type="button" onClick={() => item.cancel?.()} disabled={busy || answered}>
            Dismiss
          </button>
        </div>
      </div>
    )
  } else if (item.reason === 'tool_call') {
    body = <ToolApproval item={item} disabled={busy || answered} serverErrors={serverErrors} />
  } else if (item.reason === 'confirmation') {
    body = <Confirmation item={item} disabled={busy || answered} />
  } else {
    const form = asForm(item.responseSchema as Schema | undefined)
    body =
      form && fieldsOf(form.schema).length > 0 ? (
        <SchemaForm
          schema={form.schema}
          submitLabel="Submit"
          disabled={busy || answered}
          serverErrors={serverErrors}
          onSubmit={(value) => item.resolveInterrupt!(form.bare ? value[ANSWER] : value)}
          secondary={
            <button type="button" onClick={() => item.cancel?.()} disabled={busy || answered}>
              Cancel
            </button>
          }
        />
      ) : (
        <div className="actions">
          <button type="button" className="primary" onClick={() => item.resolveInterrupt!({})} disabled={busy || answered}>
            Done
          </button>
          <button type="button" onClick={() => item.cancel?.()} disabled={busy || answered}>
            Cancel
          </button>
        </div>
      )
  }

  return (
    <section
      className={`card reason-${item.reason}${expired ? ' is-expired' : ''}${answered ? ' is-answered' : ''}`}
      aria-labelledby={headingId}
      data-testid="interrupt"
      data-reason={item.reason}
      data-kind={item.kind}
      data-status={expired ? 'expired' : item.status}
    >
      <h3 id={headingId}>
        {title}
        {total > 1 && <span className="muted"> ({index + 1} of {total})</span>}
      </h3>
      {subagent?.name && (
        <p className="asked-by muted" data-testid="asked-by" title={subagent.runId && `Run ${subagent.runId}`}>
          asked by {subagent.name}
        </p>
      )}
      {item.message && <p className="message">{item.message}</p>}
      {approval?.request && <ArgsTable args={approval.request} />}
      {item.expiresAt && !expired && <Countdown expiresAt={item.expiresAt} now={now} />}
      {body}
      {statusText[item.status] && (
        <p className="status" role="status">
          {statusText[item.status]}
        </p>
      )}
    </section>
  )
}

function ArgsTable({ args, order = [] }: { args: unknown; order?: string[] }) {
  if (!args || typeof args !== 'object') return <pre>{JSON.stringify(args, null, 2)}</pre>
  const rank = (key: string) => (order.includes(key) ? order.indexOf(key) : order.length)
  const entries = Object.entries(args as Record<string, unknown>).sort(([a], [b]) => rank(a) - rank(b))
  return (
    <dl className="args">
      {entries.map(([key, value]) => (
        <div key={key}>
          <dt>{humanize(key)}</dt>
          <dd>{typeof value === 'string' ? value : JSON.stringify(value)}</dd>
        </div>
      ))}
    </dl>
  )
}

function ToolApproval({ item, disabled, serverErrors }: { item: Item; disabled: boolean; serverErrors: Item['errors'] }) {
  const [editing, setEditing] = useState(false)
  const toolApproval = item.kind === 'tool-approval'
  const meta = item.metadata?.['ag-ui-temporal:toolCall'] as { name?: string; arguments?: unknown; args?: unknown } | undefined
  const args = item.originalArgs ?? meta?.arguments ?? meta?.args ?? subagentOf(item)?.arguments
  const editSchema = editedArgsSchema(item.responseSchema as Schema | undefined)
  const approve = (editedArgs?: Record<string, unknown>) =>
    toolApproval
      ? item.resolveInterrupt!(true, editedArgs ? { editedArgs } : undefined)
      : item.resolveInterrupt!(editedArgs ? { approved: true, editedArgs } : { approved: true })
  const reject = () => (toolApproval ? item.resolveInterrupt!(false) : item.resolveInterrupt!({ approved: false }))
  // "From now on": this answer stands for the tool's later calls in this conversation, for as
  // long as the agent offers (only a generic item: TanStack's typed envelope has no room for it)
  const standing = toolApproval ? undefined : standingOffered(item.responseSchema)
  const always = (approved: boolean) => item.resolveInterrupt!({ approved, standing: { args: 'any' } })

  if (editing && editSchema) {
    return (
      <SchemaForm
        schema={editSchema}
        initial={args as Record<string, unknown>}
        submitLabel="Approve with edits"
        disabled={disabled}
        serverErrors={serverErrors}
        onSubmit={(value) => {
          // The published definition checks the edits too (the same rules the server applies).
          const parsed = item.toolName === 'sendEmail' ? sendEmailInput.safeParse(value) : { success: true as const }
          if (parsed.success) approve(value)
        }}
        secondary={
          <button type="button" onClick={() => setEditing(false)} disabled={disabled}>
            Back
          </button>
        }
      />
    )
  }
  return (
    <>
      <ArgsTable args={args} order={editSchema?.required ?? Object.keys(editSchema?.properties ?? {})} />
      {serverErrors.length > 0 && (
        <ul className="server-errors" role="alert">
          {serverErrors.map((error, i) => (
            <li key={i}>{error.message}</li>
          ))}
        </ul>
      )}
      <div className="actions">
        <button type="button" className="primary" onClick={() => approve()} disabled={disabled}>
          Approve
        </button>
        {editSchema && (
          <button type="button" onClick={() => setEditing(true)} disabled={disabled}>
            Edit…
          </button>
        )}
        <button type="button" className="danger" onClick={reject} disabled={disabled}>
          Reject
        </button>
      </div>
      {standing !== undefined && (
        <div className="actions standing-actions">
          <button type="button" onClick={() => always(true)} disabled={disabled}>
            Approve from now on
          </button>
          <button type="button" onClick={() => always(false)} disabled={disabled}>
            Reject from now on
          </button>
          <span className="muted">for {item.toolName ?? meta?.name ?? 'this tool'}, in this conversation, for up to {Math.round(standing / 3600) || 1} h</span>
        </div>
      )}
    </>
  )
}

function Confirmation({ item, disabled }: { item: Item; disabled: boolean }) {
  const schema = item.responseSchema as Schema | undefined
  const booleanField = fieldsOf(schema).find((field) => field.kind === 'boolean')
  const answer = (yes: boolean) => {
    // The spec puts a no in the payload (`false`), not in a cancel.
    if (!schema || schema.type === 'boolean') item.resolveInterrupt!(yes)
    else if (booleanField) item.resolveInterrupt!({ [booleanField.name]: yes })
    else if (yes) item.resolveInterrupt!({})
    else item.cancel?.()
  }
  return (
    <div className="actions">
      <button type="button" className="primary" onClick={() => answer(true)} disabled={disabled}>
        Yes
      </button>
      <button type="button" onClick={() => answer(false)} disabled={disabled}>
        No
      </button>
    </div>
  )
}
