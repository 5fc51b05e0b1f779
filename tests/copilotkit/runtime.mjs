// CopilotKit's runtime (@copilotkit/runtime 1.75.0, its v2 API) in Node, between CopilotKit's
// client and the gateway: the runtime's AG-UI agent `assistant` is an `HttpAgent` pointed at
// the gateway's `/agents/assistant`, its runner the default `InMemoryAgentRunner`.
//
//   node runtime.mjs <agent url> [<page dir>]
//
// Prints one JSON line, {"url": "<runtime url>"} (the `runtimeUrl` a client is given), once it
// listens on a free loopback port; serves until stdin closes (the test that started it ends).
// With a page dir (build.mjs's output) it also serves that page at `/`, as an app's server
// serves its pages beside the runtime.
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import { basename, extname, join } from 'node:path'

process.env.COPILOTKIT_TELEMETRY_DISABLED = 'true' // no analytics calls from tests

const { HttpAgent } = await import('@ag-ui/client')
const { CopilotRuntime, InMemoryAgentRunner } = await import('@copilotkit/runtime/v2')
const { createCopilotNodeListener } = await import('@copilotkit/runtime/v2/node')

const [agentUrl, pageDir] = process.argv.slice(2)
const BASE_PATH = '/api/copilotkit'

const runtime = new CopilotRuntime({
  agents: { assistant: new HttpAgent({ url: agentUrl }) },
  runner: new InMemoryAgentRunner(),
})
const listener = createCopilotNodeListener({ runtime, basePath: BASE_PATH, activateChannels: false })
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' }

/** The page's files: one flat folder (index.html, page.js, page.css and its fonts). */
async function servePage(req, res) {
  const name = basename(new URL(req.url, 'http://page').pathname)
  const file = join(pageDir, name || 'index.html')
  try {
    const body = await readFile(file)
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' })
    res.end(body)
  } catch {
    res.writeHead(404).end()
  }
}

const server = createServer((req, res) =>
  pageDir && !req.url.startsWith(BASE_PATH) ? servePage(req, res) : listener(req, res),
)
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address()
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}${BASE_PATH}` }) + '\n')
})

process.stdin.resume()
process.stdin.on('end', () => {
  server.close(() => process.exit(0))
  server.closeAllConnections()
})
