// The outline: chapters with their start as a link into the transcript; generating one when the
// note has none (its price shown first).
import { useState } from 'preact/hooks'
import { api, type Outline } from '../../api.ts'
import { Cost, ErrorMessage, Link, Loading, useData } from '../../components.tsx'
import { clock, when } from '../../format.ts'
import { priceOf, useReference } from '../../reference.ts'
import { timeHref, type Credits } from './shared.ts'

export function OutlinePanel(p: { noteId: string; credits: Credits }) {
  const ref = useReference()
  const outline = useData(() => api<Outline>('GET', `/notes/${p.noteId}/outline`), [p.noteId])
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const o = outline.data
  if (!o) return outline.error ? <ErrorMessage error={outline.error} /> : <Loading />
  return (
    <>
      {o.outline.length === 0 ? (
        <>
          <p class="empty" id="no-outline">
            {o.attemptedAt ? `An outline was attempted ${when(o.attemptedAt)} and did not come out (its credits were given back).` : 'No outline yet.'}
          </p>
          <p class="paid">
            <button
              type="button"
              class="primary"
              disabled={busy}
              aria-describedby="outline-cost"
              onClick={async () => {
                setBusy(true)
                setError(null)
                try {
                  outline.setData(await api<Outline>('GET', `/notes/${p.noteId}/outline?generate=1`))
                } catch (err) {
                  setError(err)
                } finally {
                  setBusy(false)
                  p.credits.refresh()
                }
              }}
            >
              {busy ? 'Generating…' : 'Generate chapters'}
            </button>{' '}
            <span id="outline-cost" class="small">
              <Cost credits={priceOf(ref, 'outline')} />
              {p.credits.left !== null ? `; ${p.credits.left} left` : ''}
            </span>
          </p>
        </>
      ) : (
        <ol class="chapters" id="chapters">
          {o.outline.map((c) => (
            <li key={c.startMs}>
              <Link to={timeHref(p.noteId, c.startMs)} class="anchor">
                {clock(c.startMs)}
              </Link>{' '}
              {c.headline} <span class="small">(until {clock(c.endMs)})</span>
            </li>
          ))}
        </ol>
      )}
      <ErrorMessage error={error} />
    </>
  )
}
