// A small JSON Schema (2020-12 subset) reader: what the interrupt cards need to
// generate a form from a `responseSchema` and validate it in the browser. The
// server validates again (full 2020-12, formats checked); its errors arrive on
// the item as `interruptErrors`.

export type Schema = {
  type?: string | string[]
  title?: string
  description?: string
  enum?: unknown[]
  const?: unknown
  format?: string
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  pattern?: string
  required?: string[]
  properties?: Record<string, Schema>
  additionalProperties?: boolean | Schema
  oneOf?: Schema[]
  anyOf?: Schema[]
  default?: unknown
}

export type Field = {
  name: string
  label: string
  schema: Schema
  required: boolean
  kind: 'enum' | 'integer' | 'number' | 'boolean' | 'string' | 'json'
}

const typeOf = (schema: Schema): string | undefined =>
  Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type

export const humanize = (name: string) =>
  name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ').replace(/^./, (c) => c.toUpperCase())

/** The fields of an object schema, in the schema's own property order. */
export function fieldsOf(schema: Schema | undefined): Field[] {
  if (!schema || typeOf(schema) !== 'object' || !schema.properties) return []
  const required = new Set(schema.required ?? [])
  // Required fields first, in `required` order (the wire may sort property keys).
  const order = [...(schema.required ?? []), ...Object.keys(schema.properties)]
  const rank = (name: string) => order.indexOf(name)
  const entries = Object.entries(schema.properties).sort(([a], [b]) => rank(a) - rank(b))
  return entries.map(([name, sub]) => {
    const type = typeOf(sub)
    const kind: Field['kind'] = sub.enum
      ? 'enum'
      : type === 'integer' || type === 'number' || type === 'boolean' || type === 'string'
        ? type
        : 'json'
    return { name, label: sub.title ?? humanize(name), schema: sub, required: required.has(name), kind }
  })
}

/** The one field of a form whose answer is a bare value (`asForm`). */
export const ANSWER = 'answer'

/**
 * A schema as a form: an object schema as it is; one whose answer is a bare value (a string,
 * a number, a choice: e.g. an agent's free-text question, `{"type": "string"}`) as a one-field
 * object (`ANSWER`), `bare`, the value to send being that field's.
 */
export function asForm(schema: Schema | undefined): { schema: Schema; bare: boolean } | undefined {
  if (!schema) return undefined
  const type = typeOf(schema)
  if (!schema.enum && type !== 'string' && type !== 'number' && type !== 'integer' && type !== 'boolean') {
    return { schema, bare: false }
  }
  const field: Schema = { title: 'Answer', ...schema }
  return { schema: { type: 'object', properties: { [ANSWER]: field }, required: [ANSWER] }, bare: true }
}

/** The approve branch's `editedArgs` schema of a tool approval envelope, if it offers one. */
export function editedArgsSchema(schema: Schema | undefined): Schema | undefined {
  for (const branch of schema?.oneOf ?? schema?.anyOf ?? []) {
    const approved = branch.properties?.approved
    if (approved?.const === true || approved?.enum?.includes(true)) {
      if (branch.properties?.editedArgs) return branch.properties.editedArgs
    }
  }
  return schema?.properties?.editedArgs
}

/** Text inputs -> typed values (empty optional fields are left out). */
export function coerce(fields: Field[], raw: Record<string, string | boolean>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const field of fields) {
    const value = raw[field.name]
    if (field.kind === 'boolean') {
      out[field.name] = value === true
      continue
    }
    if (value === undefined || value === '') continue
    const text = String(value)
    if (field.kind === 'integer' || field.kind === 'number') {
      out[field.name] = text.trim() === '' || Number.isNaN(Number(text)) ? text : Number(text)
    } else if (field.kind === 'json') {
      try {
        out[field.name] = JSON.parse(text)
      } catch {
        out[field.name] = text
      }
    } else out[field.name] = text
  }
  return out
}

/** Browser-side validation: {fieldName: message}; empty when valid. */
export function validate(fields: Field[], value: Record<string, unknown>): Record<string, string> {
  const errors: Record<string, string> = {}
  for (const field of fields) {
    const v = value[field.name]
    const s = field.schema
    if (v === undefined) {
      if (field.required) errors[field.name] = `${field.label} is required`
      continue
    }
    const type = typeOf(s)
    if (s.enum && !s.enum.some((option) => option === v)) {
      errors[field.name] = `Choose one of ${s.enum.join(', ')}`
    } else if (type === 'integer' && !(typeof v === 'number' && Number.isInteger(v))) {
      errors[field.name] = `${field.label} must be a whole number`
    } else if (type === 'number' && !(typeof v === 'number' && Number.isFinite(v))) {
      errors[field.name] = `${field.label} must be a number`
    } else if (typeof v === 'number' && s.minimum !== undefined && v < s.minimum) {
      errors[field.name] = `${field.label} must be at least ${s.minimum}`
    } else if (typeof v === 'number' && s.maximum !== undefined && v > s.maximum) {
      errors[field.name] = `${field.label} must be at most ${s.maximum}`
    } else if (type === 'string' && typeof v !== 'string') {
      errors[field.name] = `${field.label} must be text`
    } else if (typeof v === 'string' && s.format === 'email' && !v.includes('@')) {
      errors[field.name] = `${field.label} must be an email address`
    } else if (typeof v === 'string' && s.minLength !== undefined && v.length < s.minLength) {
      errors[field.name] = `${field.label} must have at least ${s.minLength} characters`
    } else if (typeof v === 'string' && s.pattern && !new RegExp(s.pattern, 'u').test(v)) {
      errors[field.name] = `${field.label} has the wrong format`
    }
  }
  return errors
}

/** Initial text values for a form, from given values or schema defaults. */
export function initialRaw(fields: Field[], values?: Record<string, unknown>) {
  const raw: Record<string, string | boolean> = {}
  for (const field of fields) {
    const v = values?.[field.name] ?? field.schema.default
    if (field.kind === 'boolean') raw[field.name] = v === true
    else if (v === undefined) raw[field.name] = ''
    else raw[field.name] = field.kind === 'json' ? JSON.stringify(v) : String(v)
  }
  return raw
}
