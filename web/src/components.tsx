// Pieces every page uses. Everything interactive is a real <a>, <button> or form control, so it
// takes the keyboard and shows focus; messages go to live regions so screen readers hear them.
import type { ComponentChildren } from 'preact'
import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import { BASE, linkClick } from './router.ts'
import { errorText } from './api.ts'

export function Link(p: { to: string; children: ComponentChildren; current?: boolean; class?: string }) {
  const href = p.to.startsWith('/') ? p.to : `${BASE}/${p.to}`
  return (
    <a href={href} class={p.class} aria-current={p.current ? 'page' : undefined} onClick={(e) => linkClick(e as unknown as MouseEvent, href)}>
      {p.children}
    </a>
  )
}

/** The page's heading; it takes focus when the page opens, so keyboard and screen-reader users start there. */
export function PageTitle(p: { children: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    ref.current?.focus()
  }, [])
  return (
    <h1 tabIndex={-1} ref={ref} id="page-title">
      {p.children}
    </h1>
  )
}

export function ErrorMessage(p: { error: unknown }) {
  if (!p.error) return null
  return (
    <p role="alert" class="error">
      {errorText(p.error)}
    </p>
  )
}

/** Polite announcements ("Key revoked", "Copied"). */
export function Status(p: { message: string | null }) {
  return (
    <p role="status" class="status" aria-live="polite">
      {p.message ?? ''}
    </p>
  )
}

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text)
    return true
  } catch {
    // No clipboard API here (plain http on another host, or refused): select and copy the old way.
    const area = document.createElement('textarea')
    area.value = text
    area.setAttribute('readonly', '')
    area.className = 'offscreen'
    document.body.appendChild(area)
    area.select()
    const ok = document.execCommand('copy')
    area.remove()
    return ok
  }
}

/** A secret shown once: read-only field, copy button, and a clear warning. */
export function SecretOnce(p: { label: string; value: string; onDone: () => void; id: string }) {
  const [copied, setCopied] = useState<string | null>(null)
  const field = useRef<HTMLInputElement>(null)
  useEffect(() => {
    field.current?.focus()
    field.current?.select()
  }, [])
  return (
    <section class="secret" aria-labelledby={`${p.id}-title`}>
      <h2 id={`${p.id}-title`}>{p.label}</h2>
      <p>
        <strong>Copy it now: it is shown this once.</strong> Only a hash is stored; if you lose it, make a new one.
      </p>
      <div class="secret-row">
        <label for={p.id} class="visually-hidden">
          {p.label}
        </label>
        <input id={p.id} ref={field} class="secret-value" readOnly value={p.value} spellcheck={false} autocomplete="off" />
        <button type="button" onClick={async () => setCopied((await copyText(p.value)) ? 'Copied to the clipboard.' : 'Could not copy: select the text and copy it.')}>
          Copy
        </button>
        <button type="button" class="quiet" onClick={p.onDone}>
          Done
        </button>
      </div>
      <Status message={copied} />
    </section>
  )
}

/** A destructive button that asks once more, in place (no pop-up). */
export function ConfirmButton(p: { label: string; confirmLabel: string; onConfirm: () => Promise<void> | void; describedBy?: string; disabled?: boolean }) {
  const [asking, setAsking] = useState(false)
  const [busy, setBusy] = useState(false)
  const confirmRef = useRef<HTMLButtonElement>(null)
  const firstRef = useRef<HTMLButtonElement>(null)
  useEffect(() => {
    if (asking) confirmRef.current?.focus()
  }, [asking])
  if (!asking) {
    return (
      <button type="button" class="danger" ref={firstRef} disabled={p.disabled} aria-describedby={p.describedBy} onClick={() => setAsking(true)}>
        {p.label}
      </button>
    )
  }
  return (
    <span class="confirm" role="group" aria-label={p.confirmLabel}>
      <button
        type="button"
        class="danger strong"
        ref={confirmRef}
        disabled={busy}
        onClick={async () => {
          setBusy(true)
          try {
            await p.onConfirm()
          } finally {
            setBusy(false)
            setAsking(false)
          }
        }}
      >
        {p.confirmLabel}
      </button>
      <button type="button" class="quiet" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  )
}

/** Loads data, reloads on demand, and optionally polls while `pollMs` returns a number. */
export function useData<T>(load: () => Promise<T>, deps: unknown[], pollMs?: (data: T) => number | null) {
  const [data, setData] = useState<T | null>(null)
  const [error, setError] = useState<unknown>(null)
  // Only the newest load may land: an older answer arriving late (a slow first cycle, then a
  // quick second) must not overwrite the newer one. Unmounting invalidates every load in flight.
  const latest = useRef(0)
  const reload = useCallback(async () => {
    const ticket = ++latest.current
    try {
      const d = await load()
      if (ticket !== latest.current) return
      setData(d)
      setError(null)
    } catch (err) {
      if (ticket === latest.current) setError(err)
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps)
  useEffect(() => {
    void reload()
    return () => {
      latest.current++
    }
  }, [reload])
  useEffect(() => {
    if (!pollMs || data === null) return
    const every = pollMs(data)
    if (every === null) return
    const t = setTimeout(() => void reload(), every)
    return () => clearTimeout(t)
  }, [data, reload])
  return { data, error, reload, setData }
}

export function Loading() {
  return (
    <p class="loading" role="status">
      Loading…
    </p>
  )
}
