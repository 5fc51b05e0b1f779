// The CopilotKit page (page/, built by build.mjs) in Debian's chromium, driven by playwright-core
// (no browser download): one JSON job on stdin, one JSON result on stdout.
//
//   {chromium, artifacts, scenarios: [{name, url, text, sent}]}
//     url   the page for a thread (`/?thread=T`, `&runtime=1` through the runtime)
//     text  what the user types; sent: what the assistant says once the email went out
//   -> {results: {name: {ok, error?, cardsAtFailure?, reason, resumeStatus, cardsAfter,
//                        cardsAfterReload, sentAfter, sentAfterReload, resumes, console,
//                        screenshots}}}
// Each scenario, in a fresh context (all at once): open the page, say `text`, click Approve on the card,
// wait for `sent`, then reload and count again.
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { finish, readJob } from '../node/harness.mjs'

const job = await readJob()
await mkdir(job.artifacts, { recursive: true })
const TIMEOUT = 20000

const browser = await chromium.launch({
  executablePath: job.chromium,
  args: [
    '--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run',
  ],
})

const cards = (page) => page.getByTestId('interrupt')
const sentShown = (page, sent) => page.getByTestId('message-assistant').filter({ hasText: sent }).count()
const ready = (page) => page.locator('main[data-ready="true"]').waitFor({ timeout: TIMEOUT })

async function run(context, scenario, result) {
  const page = await context.newPage()
  page.on('console', (m) => m.type() === 'error' && result.console.push(`${m.text()} (${m.location()?.url ?? 'no url'})`))
  page.on('pageerror', (e) => result.console.push(String(e)))
  page.on('request', (r) => {
    const body = r.method() === 'POST' ? r.postDataJSON() : null
    if (body?.resume) result.resumes.push({ url: r.url(), runId: body.runId, resume: body.resume })
  })
  const shot = async (name) => {
    const file = join(job.artifacts, `${scenario.name}-${result.screenshots.length + 1}-${name}.png`)
    result.screenshots.push(file)
    await page.screenshot({ path: file, fullPage: true })
  }
  await page.goto(scenario.url)
  await ready(page)
  const box = page.getByRole('textbox', { name: 'Message' })
  await box.fill(scenario.text)
  await box.press('Enter')
  const card = cards(page).first()
  await card.waitFor({ timeout: TIMEOUT })
  result.reason = await card.getAttribute('data-reason')
  await shot('asked')
  const resumed = page.waitForResponse((r) => r.request().postDataJSON?.()?.resume !== undefined)
  await card.getByRole('button', { name: 'Approve' }).click()
  const response = await resumed
  await response.finished() // the resumed run's stream has ended
  result.resumeStatus = response.status()
  await page.getByTestId('message-assistant').filter({ hasText: scenario.sent }).first().waitFor({ timeout: TIMEOUT })
  result.cardsAfter = await cards(page).count()
  result.sentAfter = await sentShown(page, scenario.sent)
  await shot('approved')
  await page.reload()
  await ready(page)
  result.cardsAfterReload = await cards(page).count()
  result.sentAfterReload = await sentShown(page, scenario.sent)
  await shot('reloaded')
}

async function scenarioResult(scenario) {
  const result = { ok: false, resumes: [], console: [], screenshots: [] }
  const context = await browser.newContext()
  try {
    await run(context, scenario, result)
    result.ok = true
  } catch (error) {
    result.error = error?.message ?? String(error)
    const [page] = context.pages()
    if (page) {
      result.cardsAtFailure = await cards(page).count()
      const file = join(job.artifacts, `${scenario.name}-failed.png`)
      result.screenshots.push(file)
      await page.screenshot({ path: file, fullPage: true })
    }
  } finally {
    await context.close()
  }
  return [scenario.name, result]
}

// Side by side, each in a context of its own on a thread of its own: a scenario's time is
// mostly the agent's and the workflows'.
const results = Object.fromEntries(await Promise.all(job.scenarios.map(scenarioResult)))
await browser.close()
finish({ results })
