import { StrictMode, useEffect, useState } from 'react'
import { createRoot } from 'react-dom/client'
import { authHeaders, KeyMenu, SignInNeeded, useApiKey, useMe } from './Auth'
import { Chat } from './Chat'
import { Inbox, PRINCIPALS } from './Inbox'
import './styles.css'

const newThreadId = () => `web-${crypto.randomUUID().slice(0, 12)}`

/** The chat thread: `?thread=` in the URL, else the last one used here, else a new one. */
function initialThread(): string {
  const params = new URLSearchParams(location.search)
  const id = params.get('thread') ?? localStorage.getItem('agui:thread') ?? newThreadId()
  return id
}

const FALLBACK_THREAD = initialThread()

function useUrlState() {
  const [params, setParams] = useState(() => new URLSearchParams(location.search))
  useEffect(() => {
    const onPop = () => setParams(new URLSearchParams(location.search))
    addEventListener('popstate', onPop)
    return () => removeEventListener('popstate', onPop)
  }, [])
  const update = (next: Record<string, string | null>, push = true) => {
    const copy = new URLSearchParams(location.search)
    for (const [key, value] of Object.entries(next)) value === null ? copy.delete(key) : copy.set(key, value)
    const url = `${location.pathname}?${copy}`
    if (push) history.pushState(null, '', url)
    else history.replaceState(null, '', url)
    setParams(copy)
  }
  return [params, update] as const
}

function App() {
  const [params, update] = useUrlState()
  const view = params.get('view') === 'inbox' ? 'inbox' : 'chat'
  const threadId = params.get('thread') ?? FALLBACK_THREAD
  // `?agent=NAME` chats with another registered agent (GET /agents lists them).
  const agent = params.get('agent') ?? 'assistant'
  const devPrincipal = params.get('principal') ?? localStorage.getItem('agui:principal') ?? PRINCIPALS[0]
  const [apiKey, setApiKey] = useApiKey()
  const headers = authHeaders(apiKey, devPrincipal)
  const me = useMe(headers)
  // With a key, the principal is the key's owner (GET /me); without, the dev menu's.
  const principal = apiKey ? (me.state === 'ok' ? me.principal : null) : devPrincipal
  const signedIn = `${principal}/${apiKey ? 'key' : 'dev'}`

  useEffect(() => {
    if (view === 'chat' && params.get('thread') !== threadId) update({ thread: threadId }, false)
    localStorage.setItem('agui:thread', threadId)
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [threadId, view])

  const link = (next: Record<string, string | null>) => {
    const copy = new URLSearchParams(location.search)
    for (const [key, value] of Object.entries(next)) value === null ? copy.delete(key) : copy.set(key, value)
    return `?${copy}`
  }
  const go = (event: React.MouseEvent, next: Record<string, string | null>) => {
    event.preventDefault()
    update(next)
  }

  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header>
        <strong className="brand">ag-ui-temporal</strong>
        <nav aria-label="Main">
          <a href={link({ view: null })} aria-current={view === 'chat' ? 'page' : undefined} onClick={(e) => go(e, { view: null })}>
            Chat
          </a>
          <a
            href={link({ view: 'inbox' })}
            aria-current={view === 'inbox' ? 'page' : undefined}
            onClick={(e) => go(e, { view: 'inbox' })}
          >
            Inbox
          </a>
        </nav>
        {!apiKey && (
          <div className="principal">
            <label htmlFor="principal">Signed in as (dev)</label>
            <select
              id="principal"
              value={devPrincipal}
              onChange={(event) => {
                localStorage.setItem('agui:principal', event.target.value)
                update({ principal: event.target.value })
              }}
            >
              {PRINCIPALS.map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
          </div>
        )}
        <KeyMenu apiKey={apiKey} me={me} onKey={setApiKey} />
      </header>
      <main id="main" tabIndex={-1}>
        {me.state === 'unauthorized' ? (
          <SignInNeeded keyRefused={apiKey !== null} />
        ) : principal === null ? (
          <p role="status">{me.state === 'unknown' ? 'Could not learn whose key this is (GET /me failed).' : 'Signing in…'}</p>
        ) : view === 'chat' ? (
          <>
            <div className="row">
              <h1>Assistant</h1>
              <button type="button" onClick={() => update({ thread: newThreadId() })}>
                New conversation
              </button>
            </div>
            <Chat
              key={`${agent}/${threadId}/${signedIn}`}
              agent={agent}
              threadId={threadId}
              headers={headers}
              label="Assistant"
              placeholder="Ask the assistant"
              quickPrompts={[
                'Send an email to ada@example.com saying hi',
                'Send emails to ada@example.com, bob@example.com and cy@example.com',
                'File the quarterly report',
                'Pick a date for the meeting',
                'Delete my drafts',
              ]}
            />
          </>
        ) : (
          <>
            <h1>Inbox</h1>
            <Inbox key={signedIn} principal={principal} headers={headers} />
          </>
        )}
      </main>
    </>
  )
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
)
