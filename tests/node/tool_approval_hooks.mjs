// Node module hooks for the tool-approval tests (register them with
// `module.register('./tool_approval_hooks.mjs', import.meta.url)`):
//
// * `.ts` files (the published definitions in examples/tools/) are loaded
//   through TypeScript's transpileModule (cached in node_modules/.cache, as
//   importing TypeScript takes seconds), and their extensionless relative
//   imports (`./sendEmail`) resolve as a bundler would resolve them.
// * Bare imports from outside tests/node resolve from tests/node/node_modules,
//   so examples/tools needs no node_modules of its own; `zod` there means zod
//   4 (installed here as `zod-v4`, since the @ag-ui packages here use zod 3).
import { createHash } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'

const HERE = new URL('./', import.meta.url)
const RESOLVE_FROM = new URL('package.json', HERE).href
const ALIASES = new Map([['zod', 'zod-v4']])

const isBare = (specifier) => !/^(\.{0,2}\/|\.{1,2}$|[a-zA-Z][a-zA-Z0-9+.-]*:)/.test(specifier)

function aliased(specifier) {
  const [scopeOrName, ...rest] = specifier.split('/')
  const name = scopeOrName.startsWith('@') ? `${scopeOrName}/${rest.shift()}` : scopeOrName
  const target = ALIASES.get(name)
  return target === undefined ? specifier : [target, ...rest].join('/')
}

export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL
  if (parent?.startsWith('file:') && !parent.startsWith(HERE.href) && isBare(specifier)) {
    return nextResolve(aliased(specifier), { ...context, parentURL: RESOLVE_FROM })
  }
  try {
    return await nextResolve(specifier, context)
  } catch (error) {
    const relative = specifier.startsWith('./') || specifier.startsWith('../')
    if (parent?.endsWith('.ts') && relative && error?.code === 'ERR_MODULE_NOT_FOUND') {
      return nextResolve(`${specifier}.ts`, context)
    }
    throw error
  }
}

const CACHE = new URL('node_modules/.cache/tool-approval-ts/', HERE)

async function transpile(fileName, source) {
  const key = createHash('sha256').update(`${fileName}\0${source}`).digest('hex')
  const cached = new URL(`${key}.mjs`, CACHE)
  try {
    return await readFile(cached, 'utf8')
  } catch {}
  const { default: ts } = await import('typescript')
  const { outputText } = ts.transpileModule(source, {
    fileName,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      sourceMap: false,
    },
  })
  await mkdir(CACHE, { recursive: true })
  const partial = new URL(`${key}.${process.pid}.tmp`, CACHE)
  await writeFile(partial, outputText)
  await rename(partial, cached)
  return outputText
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context)
  const fileName = fileURLToPath(url)
  const source = await transpile(fileName, await readFile(fileName, 'utf8'))
  return { format: 'module', source, shortCircuit: true }
}
