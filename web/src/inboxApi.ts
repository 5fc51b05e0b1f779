// The inbox's HTTP API, as the task list reads and answers it:
//   GET  /inbox                -> {items: [InboxItem], names, threadId} (gateway/routes/inbox.py)
//   POST /interrupts/{id}      -> a decision; refusals are 4xx {code, message}
//   GET  /approvals/{chain}    -> the chain, with `history` in sentences (gateway/routes/approvals.py)
import { UNAUTHORIZED } from './Auth'

export type Seat = { principal: string; status: string }
export type Approval = {
  chainId: string
  title?: string | null
  step?: string | null
  requester?: string | null
  request: Record<string, unknown>
  delegatedFrom?: string | null
  escalation?: boolean
  seats: Seat[]
  delegates: string[]
}
export type Answer = { status: 'resolved' | 'cancelled'; payload?: any; at?: string | null; via?: string | null }
export type InboxItem = {
  id: string
  reason: string
  message?: string | null
  status: 'waiting' | 'resolved' | 'cancelled' | 'expired' | 'withdrawn'
  expiresAt?: string | null
  endedAt?: string | null
  responseSchema?: Record<string, unknown> | null
  answer?: Answer | null
  approval?: Approval | null
}
export type InboxList = { items: InboxItem[]; names: Record<string, string>; threadId: string }
export type HistoryLine = { at: string; kind: string; step?: string | null; text: string }

/** A request the server (or the network) refused, in plain words for the person. */
export class Refusal extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message)
  }
}

/** What a person reads for each refusal code (gateway `ErrorCode`s, plus HTTP-level ones). */
const PLAIN: Record<string, string> = {
  INTERRUPT_EXPIRED: 'This request expired before your answer arrived.',
  INTERRUPT_WITHDRAWN: 'This request no longer needs your answer.',
  INTERRUPT_ALREADY_RESOLVED: 'This request has already been answered.',
  UNKNOWN_INTERRUPT_ID: 'This request is no longer in your inbox.',
  FORBIDDEN: 'You are not allowed to answer this request.',
  INVALID_PAYLOAD: 'This answer does not fit the request. Please check it and try again.',
  INVALID_RESUME: 'This answer could not be sent as it is. Please try again.',
  PARTIAL_RESUME: 'This answer could not be applied on its own. Please try again.',
  RUN_ID_TAKEN: 'This answer could not be applied from the task list; nothing changed. Please answer it in the chat.',
  LIMIT_EXCEEDED: 'Too many answers at once. Please wait a moment and try again.',
  UNAUTHORIZED,
  RATE_LIMITED: 'Too many requests right now. Please wait a moment and try again.',
  NO_DECISION_API: 'This server cannot take answers from the task list (it has no decision API).',
  UNAVAILABLE: 'The server is not available right now; your answer was not sent. Please try again.',
  NETWORK: 'The server could not be reached; your answer was not sent. Please try again.',
}
export const NEED_DELEGATE = 'Please choose someone to delegate to.'

export const plainRefusal = (code: string) => PLAIN[code] ?? 'Your answer was not accepted. Please try again.'

async function refusalOf(response: Response): Promise<Refusal> {
  let code = ''
  try {
    const body = await response.json()
    if (typeof body?.code === 'string') code = body.code
  } catch {
    // not JSON: decided by the status below
  }
  if (!code) {
    code =
      response.status === 401
        ? 'UNAUTHORIZED'
        : response.status === 429
          ? 'RATE_LIMITED'
          : response.status === 404 || response.status === 405
            ? 'NO_DECISION_API'
            : response.status >= 500
              ? 'UNAVAILABLE'
              : 'INVALID_RESUME'
  }
  return new Refusal(plainRefusal(code), code)
}

export async function fetchInbox(headers: Record<string, string>, signal?: AbortSignal): Promise<InboxList> {
  let response: Response
  try {
    response = await fetch('/inbox', { headers, signal })
  } catch (error) {
    if ((error as Error)?.name === 'AbortError') throw error
    throw new Refusal('Could not reach the server to read your inbox.', 'NETWORK')
  }
  if (response.status === 401) throw new Refusal(UNAUTHORIZED, 'UNAUTHORIZED')
  if (!response.ok) throw new Refusal('Could not read your inbox just now; trying again shortly.', String(response.status))
  return response.json()
}

/** Answer one item (the decision API); throws a `Refusal` in plain words. */
export async function decide(
  headers: Record<string, string>,
  threadId: string,
  id: string,
  body: { status: 'resolved' | 'cancelled'; payload?: unknown },
): Promise<void> {
  let response: Response
  try {
    response = await fetch(`/interrupts/${encodeURIComponent(id)}`, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: JSON.stringify({ threadId, ...body }),
    })
  } catch {
    throw new Refusal(PLAIN.NETWORK, 'NETWORK')
  }
  if (!response.ok) throw await refusalOf(response)
}

export async function fetchHistory(headers: Record<string, string>, chainId: string): Promise<HistoryLine[]> {
  const response = await fetch(`/approvals/${encodeURIComponent(chainId)}`, { headers })
  if (!response.ok) throw new Refusal('The history of this request cannot be shown.', String(response.status))
  const body = await response.json()
  return Array.isArray(body?.history) ? body.history : []
}

/** A principal as people read it: the directory's name, `the G group` for `group:G`. */
export function nameOf(principal: string | null | undefined, names: Record<string, string>): string {
  if (!principal) return 'someone'
  if (names[principal]) return names[principal]
  if (principal.startsWith('group:')) return `the ${principal.slice('group:'.length)} group`
  return principal
}

export const when = (iso: string) =>
  new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
