// Deliverables: an email (.eml), a document (.docx) or a slide deck (.pptx) written from the
// note, its price shown first; each one made is listed with its file to download.
import { useState } from 'preact/hooks'
import { api, randomId, type Deliverable } from '../../api.ts'
import { Cost, ErrorMessage, Loading, Status, useData } from '../../components.tsx'
import { bytes, when } from '../../format.ts'
import { priceOf, useReference } from '../../reference.ts'
import type { Credits } from './shared.ts'

const KINDS: Record<string, string> = { email: 'Email (.eml)', document: 'Document (.docx)', slides: 'Slides (.pptx)' }
const words = (t: string) => t.replace(/_/g, ' ')

export function DeliverablesPanel(p: { noteId: string; credits: Credits }) {
  const ref = useReference()
  const list = useData(() => api<{ items: Deliverable[] }>('GET', `/notes/${p.noteId}/deliverables`), [p.noteId])
  const templates = ref?.deliverableTemplates ?? {}
  const [kind, setKind] = useState('email')
  const [template, setTemplate] = useState<string | null>(null)
  const [locale, setLocale] = useState('en')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const [message, setMessage] = useState<string | null>(null)
  const chosen = template && templates[kind]?.includes(template) ? template : (templates[kind]?.[0] ?? '')
  return (
    <>
      <form
        class="deliverable-form paid"
        onSubmit={async (e) => {
          e.preventDefault()
          setBusy(true)
          setError(null)
          setMessage(null)
          try {
            const r = await api<{ deliverable: Deliverable }>('POST', `/notes/${p.noteId}/deliverables`, { kind, template: chosen, locale }, { idempotencyKey: randomId() })
            setMessage(`${r.deliverable.fileName} is ready to download.`)
            await list.reload()
          } catch (err) {
            setError(err)
          } finally {
            setBusy(false)
            p.credits.refresh()
          }
        }}
      >
        <div class="field">
          <label for="kind">Kind</label>
          <select id="kind" value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
            {Object.keys(templates).map((k) => (
              <option key={k} value={k}>
                {KINDS[k] ?? k}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="deliverable-template">Template</label>
          <select id="deliverable-template" value={chosen} onChange={(e) => setTemplate(e.currentTarget.value)}>
            {(templates[kind] ?? []).map((t) => (
              <option key={t} value={t}>
                {words(t)}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="locale">Language</label>
          <select id="locale" value={locale} onChange={(e) => setLocale(e.currentTarget.value)}>
            {(ref?.deliverableLocales ?? ['en']).map((l) => (
              <option key={l} value={l}>
                {ref?.translationLanguages.find((x) => x.code === l)?.name ?? l}
              </option>
            ))}
          </select>
        </div>
        <div class="field buttons">
          <button type="submit" class="primary" disabled={busy || !chosen} aria-describedby="deliverable-cost">
            {busy ? 'Writing…' : 'Generate'}
          </button>
          <span id="deliverable-cost" class="small">
            <Cost credits={priceOf(ref, 'deliverable')} />
            {p.credits.left !== null ? `; ${p.credits.left} left` : ''}; refunded if it fails.
          </span>
        </div>
      </form>
      <ErrorMessage error={error} />
      <Status message={message} />
      {!list.data ? (
        list.error ? <ErrorMessage error={list.error} /> : <Loading />
      ) : list.data.items.length === 0 ? (
        <p class="empty">No deliverable yet.</p>
      ) : (
        <ul class="deliverables" id="deliverables">
          {list.data.items.map((d) => (
            <li key={d.id} class="deliverable">
              <strong>{d.title}</strong>{' '}
              <span class="small">
                {KINDS[d.kind] ?? d.kind}, {words(d.template)}, {d.locale} · {when(d.createdAt)}
              </span>
              <br />
              <a class="button" href={`/app/api/notes/${p.noteId}/deliverables/${d.id}/file`} download={d.fileName}>
                Download {d.fileName}
              </a>{' '}
              <span class="small">{bytes(d.sizeBytes)}</span>
              <details>
                <summary>Read it here</summary>
                <pre class="deliverable-content">{d.content}</pre>
              </details>
            </li>
          ))}
        </ul>
      )}
    </>
  )
}
