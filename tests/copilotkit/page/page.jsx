// A small page on CopilotKit's provider and its real `useInterrupt` (v2): one chat thread of
// the gateway's assistant, its interrupts as cards. Built with esbuild (build.mjs), driven
// in Debian's chromium by browser.mjs.
//
//   /?thread=T            a self-managed HttpAgent at /agents/assistant (the page is served
//                         by the gateway)
//   /?thread=T&runtime=1  through CopilotKit's runtime at /api/copilotkit (the page is served
//                         by runtime.mjs)
import { CopilotKit, HttpAgent, useAgent, useCopilotKit, useInterrupt } from '@copilotkit/react-core/v2'
import { useEffect, useState } from 'react'
import { createRoot } from 'react-dom/client'

const params = new URLSearchParams(location.search)
const threadId = params.get('thread')
const viaRuntime = params.has('runtime')

function Cards() {
  return useInterrupt({
    agentId: 'assistant',
    renderInChat: false,
    render: ({ interrupts, resolve, cancel }) =>
      interrupts.map((interrupt) => (
        <section key={interrupt.id} data-testid="interrupt" data-reason={interrupt.reason}>
          <p>{interrupt.message}</p>
          <button type="button" onClick={() => resolve({ approved: true }, interrupt.id)}>
            Approve
          </button>
          <button type="button" onClick={() => resolve({ approved: false }, interrupt.id)}>
            Reject
          </button>
          <button type="button" onClick={() => cancel(interrupt.id)}>
            Cancel
          </button>
        </section>
      )),
  })
}

function Chat() {
  const { agent } = useAgent({ agentId: 'assistant' })
  const { copilotkit } = useCopilotKit()
  const [ready, setReady] = useState(false)
  const [text, setText] = useState('')

  useEffect(() => {
    // What CopilotChat does for a thread it is given: connect. A self-managed HttpAgent cannot
    // (AG-UI has no connect over HTTP), so the page then runs the agent without a message:
    // the gateway answers with the thread's transcript and its open interrupts.
    agent.threadId = threadId
    let live = true
    ;(async () => {
      await copilotkit.connectAgent({ agent })
      if (!viaRuntime) await copilotkit.runAgent({ agent })
      if (live) setReady(true)
    })()
    return () => {
      live = false
    }
  }, [agent])

  const send = async (event) => {
    event.preventDefault()
    agent.addMessage({ id: crypto.randomUUID(), role: 'user', content: text })
    setText('')
    await copilotkit.runAgent({ agent })
  }

  return (
    <main data-ready={ready}>
      <h1>Assistant</h1>
      <ol>
        {agent.messages
          .filter((m) => (m.role === 'user' || m.role === 'assistant') && m.content)
          .map((m) => (
            <li key={m.id} data-testid={`message-${m.role}`}>
              {m.content}
            </li>
          ))}
      </ol>
      <Cards />
      <form onSubmit={send}>
        <input aria-label="Message" value={text} onChange={(e) => setText(e.target.value)} />
        <button type="submit">Send</button>
      </form>
    </main>
  )
}

function Page() {
  const props = viaRuntime
    ? { runtimeUrl: '/api/copilotkit', useSingleEndpoint: false }
    : { selfManagedAgents: { assistant: new HttpAgent({ url: '/agents/assistant' }) } }
  return (
    <CopilotKit {...props}>
      <Chat />
    </CopilotKit>
  )
}

createRoot(document.getElementById('root')).render(<Page />)
