/**
 * The ag-ui-temporal assistant's tools, as TanStack AI tool definitions.
 *
 *   import { assistantTools } from '<this folder>'
 *   useChat({ connection: fetchServerSentEvents('/agents/assistant'), tools: assistantTools })
 *
 * Needs `@tanstack/ai` (0.58) and `zod` (4.2 or later: TanStack hashes the
 * JSON Schema zod's Standard JSON Schema support produces).
 */
import { fileQuarterlyReport } from './fileQuarterlyReport'
import { sendEmail } from './sendEmail'
import { submitExpense } from './submitExpense'

export { emailAddress, sendEmail, sendEmailInput } from './sendEmail'
export type { SendEmailInput } from './sendEmail'
export { fileQuarterlyReport, quarterlyReportForm } from './fileQuarterlyReport'
export type { QuarterlyReport } from './fileQuarterlyReport'
export { submitExpense, submitExpenseInput } from './submitExpense'
export type { SubmitExpenseInput } from './submitExpense'

/** Every tool of the assistant, as one `tools` array for `useChat` / `ChatClient`. */
export const assistantTools = [sendEmail, fileQuarterlyReport, submitExpense] as const
