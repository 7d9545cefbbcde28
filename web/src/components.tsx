// Pieces every page uses. Everything interactive is a real <a>, <button> or form control, so it
// takes the keyboard and shows focus; messages go to live regions so screen readers hear them.
import type { ComponentChildren } from 'preact'
import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import { BASE, linkClick } from './router.ts'
import { ApiError, errorText } from './api.ts'
import { missingCredits, refusalAdvice, useReference } from './reference.ts'

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

/**
 * An error in words: the service's message, then what the code means and what to do next (the
 * shared table, domain/advice.ts), and for a 402 how many credits are missing.
 */
export function ErrorMessage(p: { error: unknown; id?: string }) {
  const ref = useReference()
  if (!p.error) return null
  const advice = refusalAdvice(ref, p.error)
  const credits = missingCredits(p.error)
  return (
    <div role="alert" class="error-box" id={p.id} data-code={p.error instanceof ApiError ? p.error.code : undefined}>
      <p class="error">{errorText(p.error)}</p>
      {credits && (
        <p class="missing-credits">
          <strong>{credits.missing} credits missing.</strong>
        </p>
      )}
      {advice && (
        <p class="advice">
          {advice.sentence} {advice.next}
        </p>
      )}
    </div>
  )
}

/** "Generate · 100 credits": what an action costs, next to its button, before it is pressed. */
export function Cost(p: { credits: number | null; per?: string }) {
  if (p.credits === null) return null
  return <span class="cost">{p.credits === 0 ? 'free' : `${p.credits} credit${p.credits === 1 ? '' : 's'}${p.per ? ` ${p.per}` : ''}`}</span>
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

/**
 * Polling with backoff: fast while the answer keeps changing, slower while it stays the same
 * (`unchanged` answers in a row), never slower than `maxMs`.
 */
export const backoff = (unchanged: number, firstMs = 500, maxMs = 5000) => Math.min(maxMs, Math.round(firstMs * 1.6 ** unchanged))

/**
 * Loads data, reloads on demand, and polls while `pollMs` returns a number; `pollMs` gets how many
 * polls in a row brought nothing new, for a backoff.
 */
export function useData<T>(load: () => Promise<T>, deps: unknown[], pollMs?: (data: T, unchanged: number) => number | null) {
  const [data, setData] = useState<T | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [round, setRound] = useState(0)
  // Only the newest load may land: an older answer arriving late (a slow first cycle, then a
  // quick second) must not overwrite the newer one. Unmounting invalidates every load in flight.
  const latest = useRef(0)
  const last = useRef<{ json: string; unchanged: number }>({ json: '', unchanged: 0 })
  const reload = useCallback(async () => {
    const ticket = ++latest.current
    try {
      const d = await load()
      if (ticket !== latest.current) return
      const json = JSON.stringify(d)
      last.current = json === last.current.json ? { json, unchanged: last.current.unchanged + 1 } : { json, unchanged: 0 }
      setData(d)
      setError(null)
    } catch (err) {
      if (ticket === latest.current) setError(err)
    }
    // A poll that brought the same answer still schedules the next one.
    setRound((n) => n + 1)
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps)
  useEffect(() => {
    last.current = { json: '', unchanged: 0 }
    void reload()
    return () => {
      latest.current++
    }
  }, [reload])
  useEffect(() => {
    if (!pollMs || data === null) return
    const every = pollMs(data, last.current.unchanged)
    if (every === null) return
    const t = setTimeout(() => void reload(), every)
    return () => clearTimeout(t)
  }, [round, reload])
  return { data, error, reload, setData }
}

/**
 * Tabs: buttons in a tablist, the arrow keys move between them (one Tab stop for the list), and
 * the chosen one is in the address (`?tab=`), so a tab can be linked and survives a reload.
 */
export function Tabs<K extends string>(p: { label: string; tabs: readonly { key: K; label: string }[]; current: K; onChoose: (key: K) => void }) {
  const refs = useRef<(HTMLButtonElement | null)[]>([])
  const move = (i: number) => {
    const n = p.tabs.length
    const next = p.tabs[(i + n) % n]!
    p.onChoose(next.key)
    refs.current[(i + n) % n]?.focus()
  }
  return (
    <div role="tablist" aria-label={p.label} class="tabs">
      {p.tabs.map((t, i) => (
        <button
          key={t.key}
          ref={(el) => void (refs.current[i] = el)}
          type="button"
          role="tab"
          id={`tab-${t.key}`}
          aria-selected={t.key === p.current}
          aria-controls={`panel-${t.key}`}
          tabIndex={t.key === p.current ? 0 : -1}
          onClick={() => p.onChoose(t.key)}
          onKeyDown={(e) => {
            if (e.key === 'ArrowRight') move(i + 1)
            else if (e.key === 'ArrowLeft') move(i - 1)
            else if (e.key === 'Home') move(0)
            else if (e.key === 'End') move(p.tabs.length - 1)
            else return
            e.preventDefault()
          }}
        >
          {t.label}
        </button>
      ))}
    </div>
  )
}

export function Loading() {
  return (
    <p class="loading" role="status">
      Loading…
    </p>
  )
}

/** A page or note that is not there: a heading that says so and the way back (never an endless "Loading…"). */
export function NotFound(p: { what: 'page' | 'note' }) {
  return (
    <>
      <PageTitle>{p.what === 'note' ? 'Note not found' : 'Not found'}</PageTitle>
      <p id="not-found">
        {p.what === 'note' ? 'No note with this address belongs to your account: it was deleted, or the link is mistyped.' : 'There is no page at this address.'}{' '}
        <Link to="notes">Go to your notes</Link>.
      </p>
    </>
  )
}
