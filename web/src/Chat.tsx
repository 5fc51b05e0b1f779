import { fetchServerSentEvents, useChat } from '@tanstack/ai-react'
import { useEffect, useMemo, useRef, useState } from 'react'
import { assistantTools } from '../../examples/tools'
import { UNAUTHORIZED } from './Auth'
import { InterruptCard, isExpired, useNow, type Item } from './Interrupts'
import { openPickDate, pickDate, PickDateDialog, type DateAnswer } from './PickDate'
import { StandingDecisions } from './Standing'
import { isStopped, StopButton, wasStopped } from './Stop'

/** The assistant's tools (typed approval items) and the browser's own `pickDate`. */
const tools = [...assistantTools, pickDate]

type Props = {
  agent: string
  threadId: string
  headers?: Record<string, string>
  label: string
  placeholder?: string
  quickPrompts?: string[]
}

function partsText(message: { parts?: ReadonlyArray<any>; content?: string }) {
  return message.parts ?? (message.content ? [{ type: 'text', content: message.content }] : [])
}

/**
 * One AG-UI thread through TanStack AI's `useChat`: `persistence: true` and a stable
 * `threadId` hydrate the transcript and the pending interrupts after a reload.
 */
export function Chat({ agent, threadId, headers, label, placeholder, quickPrompts = [] }: Props) {
  const connection = useMemo(
    () => fetchServerSentEvents(`/agents/${agent}`, { headers: headers ?? {} }),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [agent, JSON.stringify(headers ?? {})],
  )
  const chat = useChat({
    connection,
    threadId,
    persistence: true,
    tools,
  })
  const { messages, sendMessage, isLoading, error, interrupts, resolveInterrupts, cancelInterrupts, resuming, addToolResult } =
    chat
  const items = interrupts as unknown as Item[]
  const [text, setText] = useState('')
  const endRef = useRef<HTMLDivElement>(null)
  // The agent called the browser's `pickDate` and waits for its answer (a dialog).
  const picking = isLoading ? null : openPickDate(messages as any)
  // An expired request holds up nothing (the server settled it as expired): only the others do.
  const now = useNow(items.some((item) => item.expiresAt) ? 1000 : 60_000)
  const blocked = items.some((item) => !isExpired(item, now)) || picking !== null
  // A message sent while only expired requests are left waits until they are closed: TanStack
  // sends nothing new while it holds a request, so a cancel acknowledges them first.
  const [queued, setQueued] = useState<string | null>(null)
  // The assistant message the running run is writing: its text grows as the deltas arrive.
  const streamingId = isLoading ? messages.filter((m) => m.role === 'assistant').at(-1)?.id : undefined
  const answerPick = (id: string, output: DateAnswer) =>
    void addToolResult({ toolCallId: id, tool: 'pickDate', output, state: 'output-available' })

  useEffect(() => {
    endRef.current?.scrollIntoView?.({ block: 'end' })
  }, [messages.length, items.length, picking?.id])

  useEffect(() => {
    if (queued === null || items.length > 0 || isLoading) return
    setQueued(null)
    setText('')
    void sendMessage(queued)
  }, [queued, items.length, isLoading, sendMessage])

  const send = (value: string) => {
    const trimmed = value.trim()
    if (!trimmed || isLoading || blocked) return
    if (items.length > 0) {
      setQueued(trimmed) // the text stays in the composer until it is sent (again if this fails)
      cancelInterrupts()
      return
    }
    setText('')
    void sendMessage(trimmed)
  }
  const approvals = items.filter((item) => item.reason === 'tool_call' && item.resolveInterrupt)

  return (
    <div className="chat" data-thread-id={threadId}>
      <ol className="messages" aria-label={`${label} conversation`} aria-live="polite" aria-relevant="additions">
        {messages.length === 0 && <li className="muted empty">No messages yet.</li>}
        {messages.map((message) => (
          <li
            key={message.id}
            className={`message ${message.role}`}
            data-testid={`message-${message.role}`}
            aria-busy={message.id === streamingId || undefined}
            data-streaming={message.id === streamingId || undefined}
          >
            <span className="sr-only">{message.role === 'user' ? 'You said:' : 'Assistant:'}</span>
            {partsText(message as any).map((part: any, i: number) =>
              part.type === 'text' ? (
                <p key={i}>{part.content}</p>
              ) : part.type === 'tool-call' ? (
                <p key={i} className="tool-call">
                  <span className="tag">Tool call</span> {part.name}({part.arguments})
                </p>
              ) : part.type === 'tool-result' ? (
                <p key={i} className="tool-result">
                  <span className="tag">Result</span>{' '}
                  {typeof part.content === 'string' ? part.content : JSON.stringify(part.content)}
                </p>
              ) : null,
            )}
            {wasStopped(message as any) && <span className="tag stopped">Stopped</span>}
          </li>
        ))}
      </ol>
      {isLoading && !resuming && (
        <div className="working">
          <p className="muted" role="status">
            Working…
          </p>
          {chat.runId && <StopButton agent={agent} threadId={threadId} runId={chat.runId} headers={headers} />}
        </div>
      )}
      {picking && <PickDateDialog key={picking.id} question={picking.question} onAnswer={(answer) => answerPick(picking.id, answer)} />}
      {items.length > 0 && (
        <div className="interrupts" role="region" aria-label="Waiting for you">
          <h2 className="sr-only">Waiting for you ({items.length})</h2>
          {approvals.length > 1 && (
            <div className="actions bulk">
              <button type="button" onClick={() => resolveInterrupts(true)} disabled={resuming}>
                Approve all {approvals.length}
              </button>
              <button type="button" onClick={() => resolveInterrupts(false)} disabled={resuming}>
                Reject all
              </button>
            </div>
          )}
          {items.map((item, index) => (
            <InterruptCard key={item.id} item={item} index={index} total={items.length} />
          ))}
        </div>
      )}
      {error && isStopped(error) && (
        <p className="muted" role="status">
          Stopped.
        </p>
      )}
      {error && !isStopped(error) && (
        <p className="error" role="alert">
          {/\b401\b/.test(error.message) ? UNAUTHORIZED : error.message}
        </p>
      )}
      <StandingDecisions agent={agent} threadId={threadId} headers={headers} version={`${isLoading}/${messages.length}`} />
      <div ref={endRef} />
      {quickPrompts.length > 0 && !blocked && (
        <div className="quick" aria-label="Try">
          {quickPrompts.map((prompt) => (
            <button type="button" key={prompt} onClick={() => send(prompt)} disabled={isLoading || blocked}>
              {prompt}
            </button>
          ))}
        </div>
      )}
      <form
        className="composer"
        onSubmit={(event) => {
          event.preventDefault()
          send(text)
        }}
      >
        <label htmlFor={`composer-${threadId}`} className="sr-only">
          Message
        </label>
        <input
          id={`composer-${threadId}`}
          value={text}
          onChange={(event) => setText(event.target.value)}
          placeholder={blocked ? 'Answer the pending items first' : (placeholder ?? 'Message')}
          disabled={blocked}
          aria-describedby={blocked ? `composer-${threadId}-hint` : undefined}
          autoComplete="off"
        />
        <button type="submit" className="primary" disabled={isLoading || blocked || !text.trim()}>
          Send
        </button>
        {blocked && (
          <span id={`composer-${threadId}-hint`} className="sr-only">
            Answer the pending items before sending a new message.
          </span>
        )}
      </form>
    </div>
  )
}
