import { useCallback, useEffect, useRef, useState } from 'react'
import { type Headers, UNAUTHORIZED } from './Auth'
import { Chat } from './Chat'
import { fetchInbox, Refusal, type InboxList } from './inboxApi'
import { useNow } from './Interrupts'
import { TaskCard } from './TaskCard'

export const PRINCIPALS = ['alice', 'bob', 'carol', 'dave', 'erin', 'dana']

/** How often the list is read again while the page is visible. */
const POLL_MS = 5000

type Loaded =
  | { state: 'loading' }
  | { state: 'ok'; list: InboxList; problem: string | null } // `problem`: the last read failed
  | { state: 'error'; message: string }

/**
 * The principal's inbox as a task list (GET /inbox): every waiting item at once, each with
 * its actions, then what was answered. The list is read again every few seconds while the
 * page is visible, when it becomes visible again, and right after an answer.
 * `headers` authenticate every request (an API key, or the dev `X-Principal`).
 */
export function Inbox({ principal, headers }: { principal: string; headers: Headers }) {
  const [loaded, setLoaded] = useState<Loaded>({ state: 'loading' })
  const [talking, setTalking] = useState(false)
  const now = useNow(POLL_MS)
  const signature = JSON.stringify(headers)
  // Reads can overlap (a poll and the read after an answer): only the newest one counts.
  const latest = useRef(0)

  const refresh = useCallback(async () => {
    const ticket = ++latest.current
    try {
      const list = await fetchInbox(headers)
      if (ticket === latest.current) setLoaded({ state: 'ok', list, problem: null })
    } catch (error) {
      if (ticket !== latest.current) return
      const message = error instanceof Refusal ? error.message : 'Could not read your inbox just now.'
      setLoaded((previous) =>
        previous.state === 'ok' && error instanceof Refusal && error.code !== 'UNAUTHORIZED'
          ? { ...previous, problem: message }
          : { state: 'error', message },
      )
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [signature])

  useEffect(() => {
    void refresh()
    const poll = setInterval(() => {
      if (document.visibilityState === 'visible') void refresh()
    }, POLL_MS)
    const onVisible = () => document.visibilityState === 'visible' && void refresh()
    document.addEventListener('visibilitychange', onVisible)
    return () => {
      clearInterval(poll)
      document.removeEventListener('visibilitychange', onVisible)
    }
  }, [refresh])

  return (
    <div className="inbox">
      {loaded.state === 'loading' && <p role="status">Loading…</p>}
      {loaded.state === 'error' && (
        <p className="error" role="alert">
          {loaded.message === UNAUTHORIZED ? UNAUTHORIZED : `${loaded.message} Trying again shortly.`}
        </p>
      )}
      {loaded.state === 'ok' && <Tasks list={loaded.list} problem={loaded.problem} headers={headers} now={now} onAnswered={refresh} />}
      <details className="conversation" onToggle={(event) => event.currentTarget.open && setTalking(true)}>
        <summary>Inbox conversation</summary>
        {/* Mounted once opened: its hydrate reads the whole thread. */}
        {talking && (
          <Chat
            agent="inbox"
            threadId={`inbox:${principal}`}
            headers={headers}
            label={`${principal}'s inbox`}
            placeholder="Ask the inbox for new items"
            quickPrompts={['Check my inbox']}
          />
        )}
      </details>
    </div>
  )
}

function Tasks({
  list,
  problem,
  headers,
  now,
  onAnswered,
}: {
  list: InboxList
  problem: string | null
  headers: Headers
  now: number
  onAnswered: () => void
}) {
  const waiting = list.items.filter((item) => item.status === 'waiting')
  const answered = list.items.filter((item) => item.status !== 'waiting')
  const card = (item: InboxList['items'][number]) => (
    <TaskCard
      key={item.id}
      item={item}
      names={list.names}
      threadId={list.threadId}
      headers={headers}
      now={now}
      onAnswered={onAnswered}
    />
  )
  return (
    <>
      {problem && (
        <p className="muted" role="status">
          {problem}
        </p>
      )}
      {list.items.length === 0 ? (
        <p className="empty-state" data-testid="inbox-empty">
          Nothing waits for you.
        </p>
      ) : (
        <>
          <section aria-labelledby="waiting-heading">
            <h2 id="waiting-heading">Waiting for you ({waiting.length})</h2>
            {waiting.length === 0 ? (
              <p className="muted">Nothing waits for you right now.</p>
            ) : (
              <ul className="tasks">{waiting.map(card)}</ul>
            )}
          </section>
          {answered.length > 0 && (
            <section aria-labelledby="answered-heading">
              <h2 id="answered-heading">Answered</h2>
              <ul className="tasks">{answered.map(card)}</ul>
            </section>
          )}
        </>
      )}
    </>
  )
}

