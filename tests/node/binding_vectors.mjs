// Reference canonical JSON / digest / binding reader from the real @tanstack/ai.
//
// Usage:
//   node binding_vectors.mjs               stdin: JSON array of values
//                                          stdout: JSON array of {canonical, digest}
//                                                  (or {error} when the library throws)
//   node binding_vectors.mjs read-binding  stdin: JSON array of AG-UI Interrupt objects
//                                          stdout: JSON array of readInterruptBinding()
//                                                  results (null when unbound)
import {
  canonicalInterruptJson,
  digestInterruptJson,
  readInterruptBinding,
} from '@tanstack/ai'

async function readStdin() {
  const chunks = []
  for await (const chunk of process.stdin) chunks.push(chunk)
  return Buffer.concat(chunks).toString('utf8')
}

function canonicalAndDigest(value) {
  try {
    const canonical = canonicalInterruptJson(value)
    return { canonical, digest: digestInterruptJson(canonical) }
  } catch (error) {
    return { error: `${error.name}: ${error.message}` }
  }
}

function readBinding(descriptor) {
  return readInterruptBinding(descriptor) ?? null
}

const mode = process.argv[2] ?? 'canonical'
const inputs = JSON.parse(await readStdin())
if (!Array.isArray(inputs)) throw new TypeError('stdin must be a JSON array')
const handlers = { canonical: canonicalAndDigest, 'read-binding': readBinding }
const handler = handlers[mode]
if (!handler) throw new Error(`unknown mode: ${mode}`)
// JSON.stringify escapes lone surrogates (well-formed since ES2019), so the
// UTF-8 output always decodes cleanly on the Python side.
process.stdout.write(JSON.stringify(inputs.map(handler)))
