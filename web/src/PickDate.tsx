import { toolDefinition } from '@tanstack/ai'
import { useEffect, useId, useRef, useState } from 'react'
import { z } from 'zod'

/**
 * `pickDate`, the demo's frontend tool: the browser offers it in `RunAgentInput.tools`, the
 * agent may call it, and the run ends with the call. The answer is the user's, from a
 * dialog: `{date: "YYYY-MM-DD"}` or `{cancelled: true}`, sent with `addToolResult` (the
 * client then continues with a run carrying the `tool` message).
 *
 * No `execute`: the dialog is drawn from the transcript (a `pickDate` call without a
 * result), so it is there again after a reload, or days later, until answered.
 */
export const pickDate = toolDefinition({
  name: 'pickDate',
  description: 'Ask the user to pick a date in the browser.',
  inputSchema: z.object({ question: z.string() }),
}).client()

export type DateAnswer = { date: string } | { cancelled: true }

type Part = { type: string; id?: string; name?: string; toolCallId?: string; output?: unknown; input?: any; arguments?: string }
type Message = { role: string; parts?: ReadonlyArray<Part> }

/** The newest message's `pickDate` call that has no result yet (none while a run goes on). */
export function openPickDate(messages: ReadonlyArray<Message>): { id: string; question: string } | null {
  const last = messages[messages.length - 1]
  if (last?.role !== 'assistant') return null
  const parts = last.parts ?? []
  const answered = new Set(parts.filter((p) => p.type === 'tool-result').map((p) => p.toolCallId))
  const call = parts.find(
    (p) => p.type === 'tool-call' && p.name === 'pickDate' && p.output === undefined && !answered.has(p.id),
  )
  if (!call?.id) return null
  return { id: call.id, question: questionOf(call) }
}

function questionOf(call: Part): string {
  if (typeof call.input?.question === 'string') return call.input.question
  try {
    return JSON.parse(call.arguments ?? '{}').question ?? 'Pick a date'
  } catch {
    return 'Pick a date'
  }
}

const today = () => new Date().toISOString().slice(0, 10)

/** A modal dialog with a date input: *Confirm* answers the date, *Cancel* (or Escape) cancels. */
export function PickDateDialog({ question, onAnswer }: { question: string; onAnswer: (answer: DateAnswer) => void }) {
  const ref = useRef<HTMLDialogElement>(null)
  const titleId = useId()
  const inputId = useId()
  const [date, setDate] = useState(today)
  const [sent, setSent] = useState(false)

  useEffect(() => {
    const dialog = ref.current
    if (dialog && !dialog.open) dialog.showModal?.()
    return () => dialog?.close?.()
  }, [])

  const answer = (value: DateAnswer) => {
    if (sent) return
    setSent(true)
    ref.current?.close?.()
    onAnswer(value)
  }

  return (
    <dialog
      ref={ref}
      className="pick-date"
      aria-labelledby={titleId}
      data-testid="pick-date"
      onCancel={(event) => {
        event.preventDefault() // Escape: an answer of its own, not a silent close
        answer({ cancelled: true })
      }}
    >
      <form
        method="dialog"
        onSubmit={(event) => {
          event.preventDefault()
          if (date) answer({ date })
        }}
      >
        <h2 id={titleId}>{question}</h2>
        <label htmlFor={inputId}>Date</label>
        <input id={inputId} type="date" required value={date} onChange={(event) => setDate(event.target.value)} />
        <div className="actions">
          <button type="submit" className="primary" disabled={sent || !date}>
            Confirm
          </button>
          <button type="button" onClick={() => answer({ cancelled: true })} disabled={sent}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  )
}
