// The reference UI (web/) in Debian's chromium, driven by playwright-core (no
// browser download): one JSON job on stdin, one JSON result on stdout.
//
//   {url, artifacts, chromium, tag, scenarios: [name], parallel?: how many run at once (4),
//    sites?: {name: {url, agent?, apiKey?}}}
//   A scenario's pages are on its site's gateway (`url` when it has none): relative
//   addresses resolve against its context's `baseURL`; `agent` is the paced agent of the
//   streaming, stop and openai scenarios, `apiKey` the apiKey scenario's key.
//   -> {results: {name: {ok, skipped?, error?, screenshots: [file], ...facts}}}
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { chromium } from 'playwright-core'

const chunks = []
for await (const chunk of process.stdin) chunks.push(chunk)
const job = JSON.parse(Buffer.concat(chunks).toString('utf8'))
await mkdir(job.artifacts, { recursive: true })

const browser = await chromium.launch({
  executablePath: job.chromium,
  args: [
    '--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run',
  ],
})
const TIMEOUT = 15000

function step(page, result, name) {
  const file = join(job.artifacts, `${result.name}-${String(result.screenshots.length + 1).padStart(2, '0')}-${name}.png`)
  result.screenshots.push(file)
  return page.screenshot({ path: file, fullPage: true })
}

const cards = (page) => page.getByTestId('interrupt')

/** The first interrupt card, once it is on the page. */
async function firstCard(page) {
  const card = cards(page).first()
  await card.waitFor({ timeout: TIMEOUT })
  return card
}
const assistantSaid = (page, text) =>
  page.getByTestId('message-assistant').filter({ hasText: text }).first().waitFor({ timeout: TIMEOUT })

/** Type into the composer and press Enter: the keyboard path. */
async function say(page, text) {
  const box = page.getByRole('textbox', { name: 'Message' })
  await box.click()
  await box.fill(text)
  await box.press('Enter')
}

async function openChat(context, thread) {
  const page = await context.newPage()
  await page.goto(`/?thread=${thread}`)
  await page.getByRole('heading', { name: 'Assistant' }).waitFor({ timeout: TIMEOUT })
  return page
}

/** Inputs without an accessible name (labels, aria-label) on the page. */
const unlabelled = (page) =>
  page.evaluate(() =>
    [...document.querySelectorAll('input, select, textarea, button')]
      .filter((el) => !(el.labels?.length || el.getAttribute('aria-label') || el.textContent.trim()))
      .map((el) => el.outerHTML.slice(0, 120)),
  )

const thread = (name) => `ui-${name}-${job.tag}`

/** `principal`'s task list (the dev principal menu's choice, in the URL). */
async function openInbox(context, principal) {
  const page = await context.newPage()
  await page.goto(`/?view=inbox&principal=${principal}`)
  await page.getByRole('heading', { name: 'Inbox', exact: true }).waitFor({ timeout: TIMEOUT })
  await page.waitForFunction(() => !document.body.innerText.includes('Loading…'), null, { timeout: TIMEOUT })
  return page
}

/** A card of the task list, by a text it shows. */
const task = (page, text) => page.getByTestId('task').filter({ hasText: text })

/** alice asks her assistant to reimburse an expense and approves the tool call: the
 * expense's approval chain starts (its first step asks bob). */
async function submitExpense(page, result, text) {
  if (page.url() === 'about:blank') await page.goto(`/?thread=${thread(`expense-${result.name}`)}&principal=alice`)
  await page.getByRole('heading', { name: 'Assistant' }).waitFor({ timeout: TIMEOUT })
  const before = await page.getByTestId('message-assistant').filter({ hasText: 'for approval as' }).count()
  await say(page, text)
  const submit = cards(page).first()
  await submit.waitFor({ timeout: TIMEOUT })
  await submit.getByRole('button', { name: 'Approve', exact: true }).click()
  await page
    .getByTestId('message-assistant')
    .filter({ hasText: 'for approval as' })
    .nth(before)
    .waitFor({ timeout: TIMEOUT })
}

const scenarios = {
  async email(context, result) {
    const page = await openChat(context, thread('email'))
    await say(page, `Send an email to ada-${job.tag}@example.com saying hi`)
    const card = await firstCard(page)
    result.kind = await card.getAttribute('data-kind')
    result.unlabelled = await unlabelled(page)
    await step(page, result, 'pending')
    // Keyboard: focus Approve and press Enter.
    await card.getByRole('button', { name: 'Approve', exact: true }).focus()
    await page.keyboard.press('Enter')
    await assistantSaid(page, `Sent the email to ada-${job.tag}@example.com`)
    result.cardsAfter = await cards(page).count()
    await step(page, result, 'sent')
  },

  async edits(context, result) {
    const page = await openChat(context, thread('edits'))
    await say(page, `Send an email to ada-${job.tag}@example.com saying hi`)
    const card = await firstCard(page)
    result.kind = await card.getAttribute('data-kind')
    await card.getByRole('button', { name: 'Edit…' }).click()
    await card.getByLabel('To').fill('not-an-address')
    await card.getByRole('button', { name: 'Approve with edits' }).click()
    await card.getByText('must be an email address').waitFor({ timeout: TIMEOUT })
    await step(page, result, 'invalid-edit')
    await card.getByLabel('To').fill(`grace-${job.tag}@example.com`)
    await card.getByLabel('Subject').fill('Edited')
    await step(page, result, 'editing')
    await card.getByRole('button', { name: 'Approve with edits' }).click()
    await assistantSaid(page, `Sent the email to grace-${job.tag}@example.com ('Edited')`)
    await step(page, result, 'sent')
  },

  async parallel(context, result) {
    const page = await openChat(context, thread('parallel'))
    await page.setViewportSize({ width: 390, height: 844 }) // phone width
    const [a, b, c] = ['ada', 'bob', 'cy'].map((n) => `${n}-${job.tag}@example.com`)
    await say(page, `Send emails to ${a}, ${b} and ${c}`)
    await cards(page).nth(2).waitFor({ timeout: TIMEOUT })
    result.count = await cards(page).count()
    result.kinds = await cards(page).evaluateAll((els) => els.map((el) => el.dataset.kind))
    result.overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)
    await step(page, result, 'three-pending-phone')
    await cards(page).nth(0).getByRole('button', { name: 'Approve', exact: true }).click()
    await cards(page).nth(0).locator('[data-status="staged"], .status').first().waitFor({ timeout: TIMEOUT }).catch(() => {})
    await step(page, result, 'one-answered')
    await cards(page).nth(1).getByRole('button', { name: 'Reject' }).click()
    await cards(page).nth(2).getByRole('button', { name: 'Approve', exact: true }).click()
    await assistantSaid(page, `I did not carry out the email to ${b}: you rejected it`)
    await assistantSaid(page, `Sent the email to ${c}`)
    result.cardsAfter = await cards(page).count()
    await step(page, result, 'done')
  },

  async quarterly(context, result) {
    const page = await openChat(context, thread('quarterly'))
    await say(page, 'File the quarterly report')
    const card = await firstCard(page)
    result.reason = await card.getAttribute('data-reason')
    result.countdown = await card.locator('.countdown').count()
    await card.getByLabel('Quarter').selectOption('Q3')
    await card.getByLabel('Year').fill('1999')
    await card.getByLabel('Revenue').fill('1250000')
    await card.getByRole('button', { name: 'Submit' }).click()
    await card.getByText('Year must be at least 2000').waitFor({ timeout: TIMEOUT })
    result.focusedAfterError = await page.evaluate(() => document.activeElement?.getAttribute('name'))
    result.unlabelled = await unlabelled(page)
    await step(page, result, 'validation-error')
    // Fix it with the keyboard: the invalid field has focus.
    await page.keyboard.press('Control+A')
    await page.keyboard.type('2026')
    await page.keyboard.press('Enter')
    await assistantSaid(page, 'Filed the Q3 2026 quarterly report')
    await step(page, result, 'filed')
  },

  async reload(context, result) {
    const page = await openChat(context, thread('reload'))
    await say(page, `Send an email to reload-${job.tag}@example.com saying hi`)
    await firstCard(page)
    await step(page, result, 'before-reload')
    await page.reload()
    const card = await firstCard(page)
    result.userMessageKept = await page.getByTestId('message-user').filter({ hasText: `reload-${job.tag}` }).count()
    result.kindAfterReload = await card.getAttribute('data-kind')
    await step(page, result, 'after-reload')
    await card.getByRole('button', { name: 'Approve', exact: true }).click()
    await assistantSaid(page, `Sent the email to reload-${job.tag}@example.com`)
    await step(page, result, 'sent')
  },

  async inbox(context, result) {
    // alice submits an expense in her chat (a tool approval of her own), which starts the
    // approval chain; its first step waits for bob, whose task list shows it without his
    // sending anything (no run of his inbox thread) and without a reload.
    const runs = []
    context.on('request', (r) => {
      if (r.method() === 'POST' && r.url().includes('/agents/inbox')) runs.push(r.postDataJSON())
    })
    const page = await openInbox(context, 'bob')
    const alice = await context.newPage()
    await submitExpense(alice, result, `Reimburse 42 EUR for taxi-${job.tag}`)

    const card = task(page, `taxi-${job.tag}`)
    await card.waitFor({ timeout: TIMEOUT })
    result.facts = await card.innerText()
    result.unlabelled = await unlabelled(page)
    await step(page, result, 'bob-task')

    // bob's other tab, in the background (a hidden page reads the list once, then waits to
    // be looked at): it still shows the item as waiting after bob answered in the first.
    const background = await context.newPage()
    await background.addInitScript(() => {
      Object.defineProperty(document, 'visibilityState', { get: () => 'hidden' })
    })
    const reads = []
    background.on('request', (r) => r.method() === 'GET' && new URL(r.url()).pathname === '/inbox' && reads.push(r))
    await background.goto('/?view=inbox&principal=bob')
    const stale = task(background, `taxi-${job.tag}`)
    await stale.waitFor({ timeout: TIMEOUT })

    await card.getByLabel('Comment (optional)').fill('ok by bob')
    await card.getByRole('button', { name: 'Approve', exact: true }).click()
    await card.getByTestId('outcome').filter({ hasText: 'You approved on' }).waitFor({ timeout: TIMEOUT })
    result.outcome = await card.getByTestId('outcome').innerText()

    // The stale tab's answer is refused in plain words, and what bob typed there stays.
    await stale.getByLabel('Comment (optional)').fill('too expensive')
    await stale.getByRole('button', { name: 'Reject', exact: true }).click()
    const refusal = stale.getByRole('alert')
    await refusal.waitFor({ timeout: TIMEOUT })
    result.staleRefusal = await refusal.innerText()
    result.staleComment = await stale.getByLabel('Comment (optional)').inputValue()
    result.backgroundReads = reads.length
    await step(background, result, 'stale-tab-refused')
    await background.close()
    result.fetchRuns = runs.filter((body) => !body?.resume?.length).length // runs with no answer
    // The chain's history, in sentences (it is told bob's answer a moment later).
    await card.locator('summary', { hasText: 'History' }).click()
    const history = card.getByRole('list', { name: 'History' })
    await history.waitFor({ timeout: TIMEOUT })
    for (let i = 0; i < 40 && !(await history.innerText()).includes('approved'); i++) {
      await card.locator('summary', { hasText: 'History' }).click() // closed ...
      await card.locator('summary', { hasText: 'History' }).click() // ... and read again
      await history.waitFor({ timeout: TIMEOUT })
    }
    result.history = await history.locator('li').allInnerTexts()
    result.visibleText = await page.evaluate(() => document.body.innerText)
    await step(page, result, 'bob-approved')
  },

  async tasks(context, result) {
    // Two expenses for bob at once: both cards are on his task list together; he approves
    // one and hands the other to a delegate with the picker. No reload, no Refresh button.
    const page = await openInbox(context, 'bob')
    const alice = await context.newPage()
    await submitExpense(alice, result, `Reimburse 12 EUR for lunch-${job.tag}`)
    await submitExpense(alice, result, `Reimburse 30 EUR for train-${job.tag}`)

    const lunch = task(page, `lunch-${job.tag}`)
    const train = task(page, `train-${job.tag}`)
    await lunch.waitFor({ timeout: TIMEOUT })
    await train.waitFor({ timeout: TIMEOUT })
    result.bothVisible = (await lunch.isVisible()) && (await train.isVisible())
    result.waitingStatuses = [await lunch.getAttribute('data-status'), await train.getAttribute('data-status')]
    result.refreshButtons = await page.getByRole('button', { name: 'Refresh' }).count()
    result.lunchFacts = await lunch.innerText()
    result.unlabelled = await unlabelled(page)
    await step(page, result, 'two-waiting')

    await lunch.getByRole('button', { name: 'Approve', exact: true }).click()
    await lunch.getByTestId('outcome').filter({ hasText: 'You approved on' }).waitFor({ timeout: TIMEOUT })
    result.lunchOutcome = await lunch.getByTestId('outcome').innerText()
    await step(page, result, 'one-approved')

    await train.getByRole('button', { name: 'Delegate…' }).click()
    const picker = train.getByRole('group', { name: 'Hand this request to someone else' })
    await picker.waitFor({ timeout: TIMEOUT })
    result.delegateOptions = await picker.getByLabel('Delegate to').locator('option').allInnerTexts()
    await picker.getByRole('button', { name: 'Confirm delegation' }).click() // nobody chosen yet
    result.noTargetError = await train.getByRole('alert').innerText()
    await step(page, result, 'delegate-picker')
    await picker.getByLabel('Delegate to').selectOption({ label: 'Dana Diaz' })
    await picker.getByRole('button', { name: 'Confirm delegation' }).click()
    await train.getByTestId('outcome').filter({ hasText: 'You delegated to' }).waitFor({ timeout: TIMEOUT })
    result.trainOutcome = await train.getByTestId('outcome').innerText()
    result.visibleText = await page.evaluate(() => document.body.innerText)
    await step(page, result, 'delegated')

    // dana's task list has it now, saying whose it was.
    const dana = await openInbox(context, 'dana')
    const handed = task(dana, `train-${job.tag}`)
    await handed.waitFor({ timeout: TIMEOUT })
    result.danaFacts = await handed.innerText()
    await step(dana, result, 'dana-task')
  },

  async confirm(context, result) {
    // A yes/no before a risky step: "No" answers `false` (the spec's denial), not a cancel.
    const page = await openChat(context, thread('confirm'))
    const resumes = []
    page.on('request', (r) => r.method() === 'POST' && r.postDataJSON()?.resume && resumes.push(r.postDataJSON().resume))
    await say(page, 'Delete my drafts')
    const card = await firstCard(page)
    result.reason = await card.getAttribute('data-reason')
    await step(page, result, 'asked')
    await card.getByRole('button', { name: 'No' }).click()
    await assistantSaid(page, 'I did not carry out deleting your drafts: you said no.')
    result.resume = resumes.at(-1)
    await step(page, result, 'said-no')
  },

  async subagent(context, result) {
    // The assistant hands "cancel order" to its sub-agent `orders`: the card says who asks.
    const page = await openChat(context, thread('subagent'))
    await say(page, `Cancel order ${job.tag}`)
    const card = await firstCard(page)
    result.askedBy = await card.getByTestId('asked-by').innerText()
    result.title = await card.getByRole('heading').innerText()
    await step(page, result, 'asked')
    await card.getByRole('button', { name: 'Approve' }).click()
    await assistantSaid(page, `The order desk says: Cancelled order ${job.tag}.`)
    await step(page, result, 'approved')
  },

  async pickDate(context, result) {
    // The agent calls the browser's own tool: a dialog asks; it survives a reload; Cancel
    // and Confirm are both answers the agent hears.
    const page = await openChat(context, thread('pick'))
    await say(page, 'Pick a date for the meeting')
    const dialog = page.getByRole('dialog')
    await dialog.waitFor({ timeout: TIMEOUT })
    result.question = await dialog.getByRole('heading').innerText()
    result.composerDisabled = await page.getByRole('textbox', { name: 'Message' }).isDisabled()
    result.unlabelled = await unlabelled(page)
    await step(page, result, 'dialog')
    await page.reload()
    await dialog.waitFor({ timeout: TIMEOUT })
    await step(page, result, 'dialog-after-reload')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await assistantSaid(page, 'You did not pick a date.')
    await step(page, result, 'cancelled')
    await say(page, 'Pick a date for the meeting')
    await dialog.waitFor({ timeout: TIMEOUT })
    await dialog.getByLabel('Date').fill('2026-12-24')
    await dialog.getByRole('button', { name: 'Confirm' }).click()
    await assistantSaid(page, 'You picked 2026-12-24.')
    result.dialogsAfter = await page.getByRole('dialog').count()
    await step(page, result, 'picked')
  },

  async expired(context, result) {
    // A form whose deadline passes while the page is open (this gateway gives forms 2 s): the
    // card says so and the composer stays open; a new message is answered; a reload shows
    // no card, and the transcript says the form expired.
    const page = await openChat(context, thread('expired'))
    result.resumes = []
    page.on('request', (r) => r.method() === 'POST' && r.postDataJSON()?.resume && result.resumes.push(r.postDataJSON().resume))
    await say(page, 'File the quarterly report')
    const card = page.locator('[data-testid="interrupt"][data-status="expired"]')
    await card.waitFor({ timeout: TIMEOUT })
    result.cardText = await card.innerText()
    result.composerDisabled = await page.getByRole('textbox', { name: 'Message' }).isDisabled()
    await step(page, result, 'expired')
    await say(page, 'What can you do?')
    await assistantSaid(page, 'I can send an email')
    result.cardsAfter = await cards(page).count()
    await step(page, result, 'answered')
    await page.reload()
    await assistantSaid(page, 'nobody answered before it expired')
    await assistantSaid(page, 'I can send an email')
    result.cardsAfterReload = await cards(page).count()
    result.composerDisabledAfterReload = await page.getByRole('textbox', { name: 'Message' }).isDisabled()
    await step(page, result, 'reloaded')
  },

  async openai(context, result, site) {
    // The OpenAI Agents SDK example (`/agents/openai`): its approval card, approved by mouse.
    const page = await context.newPage()
    await page.goto(`/?thread=${thread('openai')}&agent=${site.agent}`)
    await page.getByRole('heading', { name: 'Assistant' }).waitFor({ timeout: TIMEOUT })
    await say(page, `Send an email to ada-${job.tag}@example.com saying hi`)
    const card = await firstCard(page)
    result.kind = await card.getAttribute('data-kind')
    result.editable = await card.getByRole('button', { name: 'Edit…' }).count()
    await step(page, result, 'pending')
    await card.getByRole('button', { name: 'Approve', exact: true }).click()
    await assistantSaid(page, `Sent the email to ada-${job.tag}@example.com.`)
    result.cardsAfter = await cards(page).count()
    await step(page, result, 'sent')
  },

  async adk(context, result, site) {
    // A Google ADK agent's free-text questions (tests/agents/adk_agents.py): ADK's
    // `request_input` ({"type": "string", ...}) and a long-running tool's call, each a card with
    // one text field, whose text is the answer.
    const page = await context.newPage()
    await page.goto(`/?thread=${thread('adk-ask')}&agent=adk-ask`)
    await page.getByRole('heading', { name: 'Assistant' }).waitFor({ timeout: TIMEOUT })
    await say(page, 'hello')
    let card = await firstCard(page)
    result.askReason = await card.getAttribute('data-reason')
    await card.getByLabel('Answer').fill('Ada')
    await card.getByRole('button', { name: 'Submit' }).click()
    await assistantSaid(page, 'Hello, Ada.')
    await step(page, result, 'named')
    await page.goto(`/?thread=${thread('adk-long')}&agent=adk-long`)
    await page.getByRole('heading', { name: 'Assistant' }).waitFor({ timeout: TIMEOUT })
    await say(page, 'reimburse')
    card = await firstCard(page)
    result.longMessage = await card.locator('.message').textContent()
    await step(page, result, 'asked')
    await card.getByLabel('Answer').fill('approved')
    await card.getByRole('button', { name: 'Submit' }).click()
    await assistantSaid(page, 'The manager said: {"result": "approved"}.')
    result.cardsAfter = await cards(page).count()
    await step(page, result, 'answered')
  },

  async standing(context, result, site) {
    // An approval "from now on" (an agent that offers standing decisions): the next email goes
    // without a card, the decision is listed, and once revoked the next email asks again.
    const page = await context.newPage()
    await page.goto(`/?thread=${thread('standing')}&agent=${site.agent}`)
    await page.getByRole('heading', { name: 'Assistant' }).waitFor({ timeout: TIMEOUT })
    await say(page, `Send an email to always-ada-${job.tag}@example.com saying hi`)
    const card = await firstCard(page)
    result.kind = await card.getAttribute('data-kind')
    await step(page, result, 'offered')
    await card.getByRole('button', { name: 'Approve from now on' }).click()
    await assistantSaid(page, `Sent the email to always-ada-${job.tag}@example.com.`)
    const decisions = page.getByTestId('standing-decision')
    await decisions.first().waitFor({ timeout: TIMEOUT })
    result.decisions = await decisions.count()
    result.listed = await decisions.first().textContent()
    await step(page, result, 'standing')
    await say(page, `Send an email to always-bob-${job.tag}@example.com saying hi`)
    await assistantSaid(page, `Sent the email to always-bob-${job.tag}@example.com.`)
    result.cardsForTheNext = await cards(page).count()
    await step(page, result, 'went-ahead')
    await decisions.first().getByRole('button', { name: 'Revoke' }).click()
    await page.getByTestId('standing').waitFor({ state: 'detached', timeout: TIMEOUT })
    result.decisionsAfterRevoke = await decisions.count()
    await say(page, `Send an email to always-cy-${job.tag}@example.com saying hi`)
    await firstCard(page)
    result.cardsAfterRevoke = await cards(page).count()
    await step(page, result, 'asks-again')
  },

  async streaming(context, result, site) {
    // A reply written a word at a time: a MutationObserver records the assistant message's
    // text length on every change, and whether the message was still marked as streaming.
    const page = await context.newPage()
    await page.goto(`/?thread=${thread('stream')}&agent=${site.agent}`)
    await page.getByRole('heading', { name: 'Assistant' }).waitFor({ timeout: TIMEOUT })
    await page.evaluate(() => {
      window.__seen = []
      const record = () => {
        const message = [...document.querySelectorAll('[data-testid="message-assistant"]')].at(-1)
        if (!message) return
        const text = [...message.querySelectorAll('p')].map((p) => p.textContent).join('')
        window.__seen.push({ length: text.length, streaming: message.hasAttribute('data-streaming') })
      }
      new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true })
    })
    await say(page, 'Tell me something')
    await page.locator('[data-testid="message-assistant"][data-streaming]').waitFor({ timeout: TIMEOUT })
    await step(page, result, 'streaming')
    await page.locator('[data-testid="message-assistant"]:not([data-streaming])').filter({ hasText: 'here.' }).waitFor({ timeout: TIMEOUT })
    result.finalText = await page
      .getByTestId('message-assistant')
      .last()
      .evaluate((message) => [...message.querySelectorAll('p')].map((p) => p.textContent).join(''))
    result.seen = await page.evaluate(() => window.__seen)
    await step(page, result, 'done')
  },

  async stop(context, result, site) {
    // A reply the paced agent (site.agent) writes slowly: Stop while it streams. The text
    // shown so far stays, marked stopped, with no error; the next message is answered; a
    // reload shows the stopped text marked as before.
    const page = await context.newPage()
    await page.goto(`/?thread=${thread('stop')}&agent=${site.agent}`)
    await page.getByRole('heading', { name: 'Assistant' }).waitFor({ timeout: TIMEOUT })
    await say(page, 'Tell me something slowly')
    await page.locator('[data-testid="message-assistant"][data-streaming]').waitFor({ timeout: TIMEOUT })
    await step(page, result, 'streaming')
    await page.getByRole('button', { name: 'Stop' }).click()
    const stopped = page.getByTestId('message-assistant').filter({ has: page.locator('.tag.stopped') })
    await stopped.waitFor({ timeout: TIMEOUT })
    await page.getByRole('status').filter({ hasText: 'Stopped.' }).waitFor({ timeout: TIMEOUT })
    const said = (message) => message.locator('p').allInnerTexts().then((texts) => texts.join(''))
    result.stoppedText = await said(stopped)
    result.alerts = await page.getByRole('alert').allInnerTexts()
    await step(page, result, 'stopped')
    await say(page, 'Tell me something')
    const answered = page.getByTestId('message-assistant').filter({ hasText: 'here.' })
    await answered.waitFor({ timeout: TIMEOUT })
    result.answer = await said(answered)
    // The text comes before the run's end: the button goes once the run has finished.
    const stop = page.getByRole('button', { name: 'Stop' })
    await stop.first().waitFor({ state: 'detached', timeout: TIMEOUT }).catch(() => {})
    result.stopButtons = await stop.count()
    await step(page, result, 'answered')
    await page.reload()
    await answered.waitFor({ timeout: TIMEOUT })
    result.stoppedAfterReload = await said(stopped)
    await step(page, result, 'reloaded')
  },

  async apiKey(context, result, site) {
    // AUTH_MODE=api_key: no key, then alice's key (site.apiKey) in the principal menu.
    const page = await context.newPage()
    const sent = []
    page.on('request', (request) => /^\/(me|agents|approvals|inbox|interrupts)\b/.test(new URL(request.url()).pathname) && sent.push(request))
    await page.goto(`/?thread=${thread('key')}`)
    const needed = page.getByTestId('sign-in-needed')
    await needed.waitFor({ timeout: TIMEOUT })
    result.signInMessage = await needed.innerText()
    result.unlabelled = await unlabelled(page)
    await step(page, result, 'needs-key')
    await page.getByLabel('API key', { exact: true }).fill(site.apiKey)
    sent.length = 0
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Assistant' }).waitFor({ timeout: TIMEOUT })
    result.principal = await page.getByTestId('principal').innerText()
    await say(page, `Send an email to key-${job.tag}@example.com saying hi`)
    const card = await firstCard(page)
    await step(page, result, 'pending')
    await card.getByRole('button', { name: 'Approve', exact: true }).click()
    await assistantSaid(page, `Sent the email to key-${job.tag}@example.com`)
    await page.locator('.tool-result').first().waitFor({ timeout: TIMEOUT })
    result.toolResults = await page.locator('.tool-result').count()
    result.cardsAfter = await cards(page).count()
    await step(page, result, 'sent')
    await page.getByRole('link', { name: 'Inbox' }).click()
    await page.getByRole('heading', { name: 'Inbox', exact: true }).waitFor({ timeout: TIMEOUT })
    await page.waitForFunction(() => !document.body.innerText.includes('Loading…'), null, { timeout: TIMEOUT })
    await page.locator('summary', { hasText: 'Inbox conversation' }).click()
    const conversation = page.getByRole('list', { name: "alice's inbox conversation" })
    await conversation.waitFor({ timeout: TIMEOUT })
    result.inboxThread = await conversation.count()
    await step(page, result, 'inbox')
    // every API request since signing in carries the key, none the dev X-Principal
    const api = await Promise.all(sent.map((request) => request.allHeaders()))
    result.sentBearer = api.length > 0 && api.every((headers) => headers.authorization === `Bearer ${site.apiKey}`)
    result.sentXPrincipal = api.some((headers) => 'x-principal' in headers)
  },
}

/** One scenario in a fresh context of its own: nothing it does is seen by another. */
async function run(name) {
  const result = { name, ok: false, screenshots: [], console: [] }
  const site = job.sites?.[name] ?? { url: job.url }
  const context = await browser.newContext({ viewport: { width: 1000, height: 800 }, baseURL: site.url })
  context.on('page', (page) =>
    page.on('console', (msg) => msg.type() === 'error' && result.console.push(msg.text())),
  )
  const started = Date.now()
  try {
    await scenarios[name](context, result, site)
    result.ok = true
  } catch (error) {
    result.error = String(error?.message ?? error).slice(0, 2000)
    for (const page of context.pages()) await step(page, result, 'failure').catch(() => {})
  } finally {
    result.seconds = (Date.now() - started) / 1000
    await context.close()
  }
  return result
}

// The scenarios run side by side (each on threads and addresses of its own): most of a
// scenario's time is the agent's and the workflows', not the browser's.
const results = Object.fromEntries(job.scenarios.map((name) => [name, null]))
let next = 0
async function lane() {
  while (next < job.scenarios.length) {
    const name = job.scenarios[next++]
    results[name] = await run(name)
  }
}
await Promise.all(Array.from({ length: Math.min(job.parallel ?? 4, job.scenarios.length) }, lane))
await browser.close()
process.stdout.write(JSON.stringify({ results }) + '\n')
