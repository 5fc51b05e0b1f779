import { useId, useMemo, useState } from 'react'
import { coerce, fieldsOf, initialRaw, validate, type Schema } from './schema'

type Props = {
  schema: Schema
  initial?: Record<string, unknown>
  submitLabel: string
  disabled?: boolean
  /** Server-side errors for this item (TanStack `interruptErrors`), by field when known. */
  serverErrors?: ReadonlyArray<{ message: string; path?: ReadonlyArray<string | number> }>
  onSubmit: (value: Record<string, unknown>) => void
  secondary?: React.ReactNode
}

/** A form generated from an object JSON Schema, validated in the browser before it is sent. */
export function SchemaForm({ schema, initial, submitLabel, disabled, serverErrors, onSubmit, secondary }: Props) {
  const fields = useMemo(() => fieldsOf(schema), [schema])
  const [raw, setRaw] = useState(() => initialRaw(fields, initial))
  const [errors, setErrors] = useState<Record<string, string>>({})
  const formId = useId()

  const submit = (event: React.FormEvent) => {
    event.preventDefault()
    const value = coerce(fields, raw)
    const found = validate(fields, value)
    setErrors(found)
    if (Object.keys(found).length === 0) onSubmit(value)
    else {
      const first = fields.find((f) => found[f.name])
      if (first) document.getElementById(`${formId}-${first.name}`)?.focus()
    }
  }

  return (
    <form className="schema-form" onSubmit={submit} noValidate>
      {fields.map((field) => {
        const id = `${formId}-${field.name}`
        const error = errors[field.name]
        const hint = field.schema.description
        const describedBy = [error && `${id}-error`, hint && `${id}-hint`].filter(Boolean).join(' ') || undefined
        const common = {
          id,
          name: field.name,
          disabled,
          'aria-invalid': error ? true : undefined,
          'aria-describedby': describedBy,
          'aria-required': field.required || undefined,
        }
        const set = (value: string | boolean) => setRaw((prev) => ({ ...prev, [field.name]: value }))
        return (
          <div className={`field${error ? ' invalid' : ''}`} key={field.name}>
            <label htmlFor={id}>
              {field.label}
              {field.required && <span aria-hidden="true"> *</span>}
            </label>
            {field.kind === 'enum' ? (
              <select {...common} value={String(raw[field.name])} onChange={(e) => set(e.target.value)}>
                <option value="">Choose…</option>
                {field.schema.enum!.map((option) => (
                  <option key={String(option)} value={String(option)}>
                    {String(option)}
                  </option>
                ))}
              </select>
            ) : field.kind === 'boolean' ? (
              <input {...common} type="checkbox" checked={raw[field.name] === true} onChange={(e) => set(e.target.checked)} />
            ) : field.name === 'body' || field.kind === 'json' ? (
              <textarea {...common} rows={3} value={String(raw[field.name])} onChange={(e) => set(e.target.value)} />
            ) : (
              <input
                {...common}
                type={field.schema.format === 'email' ? 'email' : 'text'}
                inputMode={field.kind === 'integer' ? 'numeric' : field.kind === 'number' ? 'decimal' : undefined}
                value={String(raw[field.name])}
                onChange={(e) => set(e.target.value)}
              />
            )}
            {hint && (
              <small id={`${id}-hint`} className="hint">
                {hint}
              </small>
            )}
            {error && (
              <small id={`${id}-error`} className="error" role="alert">
                {error}
              </small>
            )}
          </div>
        )
      })}
      {serverErrors && serverErrors.length > 0 && (
        <ul className="server-errors" role="alert" aria-label="The server did not accept this answer">
          {serverErrors.map((error, index) => (
            <li key={index}>
              {error.path && error.path.length > 0 ? `${error.path.join('.')}: ` : ''}
              {error.message}
            </li>
          ))}
        </ul>
      )}
      <div className="actions">
        <button type="submit" className="primary" disabled={disabled}>
          {submitLabel}
        </button>
        {secondary}
      </div>
    </form>
  )
}
