// The published tool definitions (examples/tools/) as TanStack AI sees them,
// and TanStack's client-side InterruptManager reading bound interrupts.
//
//   node tool_approval_defs.mjs < job.json > result.json
//
// {"mode": "definitions", "fixtures"?: [key]}
//     -> {tools: [{export, name, description, needsApproval, inputJsonSchema,
//          approvalJsonSchema: {approve, reject}, inputSchemaHash,
//          approvalSchemaHash, responseSchema, responseSchemaHash}],
//         assistantTools: [name]}   (every definition index.ts exports, plus
//                                    the requested fixtures, export "fixture:<key>")
// {"mode": "manager", "tools": [spec], "threadId", "interruptedRunId",
//  "interrupts": [Interrupt], "decisions"?: [{id, ...decision}]}
//     -> {items: [item after hydration], after: [item after the decisions],
//         submission: {resolutions} | null, interruptErrors}
//     (specs and decisions: see tool_approval_lib.mjs)
// {"mode": "managers", "cases": [manager job]} -> {results: [manager result]}
// {"mode": "typecheck"} -> {diagnostics: [text]}: tsc --strict on examples/tools and on
//     a front end using it the way TanStack's tool-approval guide does
// {"mode": "module", "path"} -> {tools: [described as above], approvalTools: [name],
//     clientToolsToApprove: [name]}: a module `GET /agents/{agent}/tools.ts` wrote
// {"mode": "typecheckModules", "modules": {key: {path, usage: source}}}
//     -> {diagnostics: {key: [text]}}: tsc --strict on each module and on its `usage`
//     (which imports it as './tools'), all in one program (the libraries' types are
//     read once), each file's diagnostics under its key
// {"mode": "jobs", "jobs": [job]} -> {results: [result]}: several jobs in one process
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { InterruptManager } from '@tanstack/ai-client'
import { hashSchemaInput, normalizeApprovalSchema } from '@tanstack/ai'
import {
  TOOLS_DIR, TOOLS_INDEX, decide, describeItem, fixtures, isToolDefinition, plain,
  published, captureConsole, readJob, finish, sleep, tools,
} from './tool_approval_lib.mjs'

captureConsole({})

const jsonSchemaOf = (schema) =>
  schema === undefined
    ? null
    : schema['~standard']?.jsonSchema
      ? schema['~standard'].jsonSchema.input({ target: 'draft-2020-12' })
      : schema

function approvalBranches(config) {
  if (config === undefined) return { approve: null, reject: null }
  if (config['~standard'] !== undefined) {
    const shared = jsonSchemaOf(config)
    return { approve: shared, reject: shared }
  }
  return { approve: jsonSchemaOf(config.approve), reject: jsonSchemaOf(config.reject) }
}

function describeDefinition(exportName, tool) {
  const normalized = normalizeApprovalSchema(tool.approvalSchema, tool.inputSchema)
  return {
    export: exportName,
    name: tool.name,
    description: tool.description,
    needsApproval: tool.needsApproval === true,
    inputJsonSchema: plain(jsonSchemaOf(tool.inputSchema)),
    approvalJsonSchema: plain(approvalBranches(tool.approvalSchema)),
    inputSchemaHash: hashSchemaInput(tool.inputSchema),
    approvalSchemaHash: normalized.approvalSchemaHash,
    responseSchema: plain(normalized.responseSchema),
    responseSchemaHash: normalized.responseSchemaHash,
  }
}

async function definitions(job) {
  const module = await published()
  const described = Object.entries(module)
    .filter(([, value]) => isToolDefinition(value))
    .map(([name, tool]) => describeDefinition(name, tool))
  for (const key of job.fixtures ?? []) {
    described.push(describeDefinition(`fixture:${key}`, fixtures[key]))
  }
  return { tools: described, assistantTools: module.assistantTools.map((tool) => tool.name) }
}

async function module(job) {
  const loaded = await import(pathToFileURL(job.path).href)
  const described = Object.entries(loaded)
    .filter(([, value]) => isToolDefinition(value))
    .map(([name, tool]) => describeDefinition(name, tool))
  return {
    tools: described,
    approvalTools: loaded.approvalTools.map((tool) => tool.name),
    clientToolsToApprove: [...loaded.clientToolsToApprove],
  }
}

async function managers(job) {
  const results = []
  for (const one of job.cases) results.push(await manager(one))
  return { results }
}

async function manager(job) {
  let submission = null
  const interruptManager = new InterruptManager({
    tools: await tools(job.tools ?? []),
    submit: async (value) => {
      submission = plain(value)
    },
  })
  interruptManager.hydrate({
    threadId: job.threadId,
    interruptedRunId: job.interruptedRunId,
    generation: 0,
    interrupts: job.interrupts,
  })
  const items = interruptManager.getInterrupts().map((item) => describeItem(item))
  for (const decision of job.decisions ?? []) {
    const item = interruptManager.getInterrupts().find((candidate) => candidate.id === decision.id)
    if (!item) throw new Error(`no item ${decision.id}`)
    decide(item, decision)
  }
  await sleep(10)
  return {
    items,
    after: interruptManager.getInterrupts().map((item) => describeItem(item)),
    submission: submission && { resolutions: submission.resolutions },
    interruptErrors: plain(interruptManager.getInterruptErrors()),
  }
}

// A front end written from TanStack's tool-approval guide, against the
// published module: it must compile, with `originalArgs` typed by the tool.
const USAGE = (index) => `
import { ChatClient, fetchServerSentEvents } from '@tanstack/ai-client'
import { assistantTools, quarterlyReportForm } from ${JSON.stringify(index)}

const client = new ChatClient({
  connection: fetchServerSentEvents('/agents/assistant'),
  tools: assistantTools,
})
for (const interrupt of client.getInterrupts()) {
  if (interrupt.kind === 'tool-approval' && interrupt.toolName === 'sendEmail') {
    const to: string = interrupt.originalArgs.to
    interrupt.resolveInterrupt(true)
    interrupt.resolveInterrupt(true, { editedArgs: { ...interrupt.originalArgs, to } })
    interrupt.resolveInterrupt(false)
    interrupt.cancel()
  } else if (interrupt.kind === 'generic' && interrupt.reason === 'input_required') {
    interrupt.resolveInterrupt(quarterlyReportForm.parse({ quarter: 'Q1', year: 2026, revenue: 1 }))
  }
}
client.resolveInterrupts(true)
`

async function typecheck() {
  const scratch = await mkdtemp(join(tmpdir(), 'tool-approval-usage-'))
  try {
    const usage = join(scratch, 'usage.ts')
    await writeFile(usage, USAGE(TOOLS_INDEX.replace(/\.ts$/, '')))
    const { published } = await compile({ published: { file: TOOLS_INDEX, usage } })
    return { diagnostics: published }
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}

async function typecheckModules(job) {
  const scratch = await mkdtemp(join(tmpdir(), 'tools-ts-'))
  try {
    const groups = {}
    for (const [index, [key, { path, usage }]] of Object.entries(job.modules).entries()) {
      const folder = join(scratch, String(index)) // each module is './tools' to its usage
      await mkdir(folder)
      groups[key] = { file: join(folder, 'tools.ts'), usage: join(folder, 'usage.ts') }
      await writeFile(groups[key].file, await readFile(path, 'utf8'))
      await writeFile(groups[key].usage, usage)
    }
    return { diagnostics: await compile(groups) }
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}

/** tsc --strict (TypeScript 5.9, no emit) on every group's `file` and module `usage`, in
 * one program: every file is a module, so none sees another's declarations. Returns each
 * group's diagnostics (one that no group's file holds goes to every group). */
async function compile(groups) {
  const { default: ts } = await import('typescript')
  const nodeModules = fileURLToPath(new URL('./node_modules/', import.meta.url))
  const program = ts.createProgram(
    Object.values(groups).flatMap(({ file, usage }) => [file, usage]),
    {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      skipLibCheck: true,
      types: [],
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      paths: { zod: [`${nodeModules}zod-v4`], '*': [`${nodeModules}*`] },
    },
  )
  const found = Object.fromEntries(Object.keys(groups).map((key) => [key, []]))
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')
    const name = diagnostic.file?.fileName
    const owners = Object.entries(groups).filter(([, g]) => name === g.file || name === g.usage)
    for (const [key, group] of owners.length ? owners : Object.entries(groups)) {
      if (!diagnostic.file) {
        found[key].push(text)
        continue
      }
      const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start)
      const where = name === group.usage ? 'usage.ts' : name
      found[key].push(`${where}:${line + 1}:${character + 1}: ${text}`)
    }
  }
  return found
}

async function jobs(job) {
  const results = []
  for (const one of job.jobs) results.push(await run(one))
  return { results }
}

function run(job) {
  const mode = modes[job.mode]
  if (!mode) throw new Error(`unknown mode: ${job.mode}`)
  return mode(job)
}

const modes = { definitions, jobs, manager, managers, module, typecheck, typecheckModules }
finish(await run(await readJob()))
