import { useEffect, useState } from 'react'

/**
 * How the UI authenticates. With an API key (AUTH_MODE=api_key; kept in localStorage) every
 * request sends `Authorization: Bearer <key>` and the principal is whoever GET /me says owns
 * it. Without one, the dev menu's principal is sent as `X-Principal` (AUTH_MODE=dev).
 */
export type Headers = Record<string, string>
export type Me =
  | { state: 'loading' }
  | { state: 'unauthorized' } // 401: this gateway wants (another) key
  | { state: 'unknown' } // no /me here, or it failed: the dev menu stands
  | { state: 'ok'; principal: string; groups: string[]; authMode: string }

const KEY_ITEM = 'agui:apiKey'
export const UNAUTHORIZED = 'This gateway asks for credentials: sign in with an API key (top of the page).'

export function useApiKey() {
  const [apiKey, setApiKey] = useState(() => localStorage.getItem(KEY_ITEM))
  const save = (key: string | null) => {
    if (key) localStorage.setItem(KEY_ITEM, key)
    else localStorage.removeItem(KEY_ITEM)
    setApiKey(key)
  }
  return [apiKey, save] as const
}

export const authHeaders = (apiKey: string | null, devPrincipal: string): Headers =>
  apiKey ? { Authorization: `Bearer ${apiKey}` } : { 'X-Principal': devPrincipal }

/** GET /me with these headers, again whenever they change. */
export function useMe(headers: Headers): Me {
  const [me, setMe] = useState<Me>({ state: 'loading' })
  const signature = JSON.stringify(headers)
  useEffect(() => {
    let live = true
    setMe({ state: 'loading' })
    const read = async (): Promise<Me> => {
      const response = await fetch('/me', { headers })
      if (response.status === 401) return { state: 'unauthorized' }
      return response.ok ? { state: 'ok', ...(await response.json()) } : { state: 'unknown' }
    }
    read()
      .catch((): Me => ({ state: 'unknown' }))
      .then((next) => live && setMe(next))
    return () => {
      live = false
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [signature])
  return me
}

export function SignInNeeded({ keyRefused }: { keyRefused: boolean }) {
  return (
    <p className="error" role="alert" data-testid="sign-in-needed">
      {keyRefused ? 'The gateway refused this API key. ' : ''}
      {UNAUTHORIZED}
    </p>
  )
}

/** Signed in with a key: its principal and "Sign out". Otherwise a form to enter one. */
export function KeyMenu({ apiKey, me, onKey }: { apiKey: string | null; me: Me; onKey: (key: string | null) => void }) {
  const [draft, setDraft] = useState('')
  if (apiKey)
    return (
      <div className="principal">
        <span>
          Signed in as <strong data-testid="principal">{me.state === 'ok' ? me.principal : '…'}</strong> (API key)
        </span>
        <button type="button" onClick={() => onKey(null)}>
          Sign out
        </button>
      </div>
    )
  return (
    <form
      className="principal"
      aria-label="Sign in with an API key"
      onSubmit={(event) => {
        event.preventDefault()
        if (draft.trim()) onKey(draft.trim())
      }}
    >
      <label htmlFor="api-key">API key</label>
      <input
        id="api-key"
        type="password"
        autoComplete="off"
        value={draft}
        onChange={(event) => setDraft(event.target.value)}
      />
      <button type="submit" disabled={!draft.trim()}>
        Sign in
      </button>
    </form>
  )
}
