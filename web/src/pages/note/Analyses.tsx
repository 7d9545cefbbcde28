// Analyses: generate any of the templates (its price shown first), then read each one: summary,
// key points, action items, decisions, questions and topics; an item the model placed in the
// audio links to that line of the transcript. The debate template's sections link the same way.
import { useState } from 'preact/hooks'
import { api, randomId, type Analysis, type AnalysisList } from '../../api.ts'
import { Cost, ErrorMessage, Link, Loading, Status, useData } from '../../components.tsx'
import { clock, when } from '../../format.ts'
import { priceOf, useReference } from '../../reference.ts'
import { timeHref, type Credits } from './shared.ts'

const TEMPLATE_NAMES: Record<string, string> = { customer_success: 'customer success', meeting_minutes: 'meeting minutes', university_class: 'university class' }
export const templateName = (t: string) => TEMPLATE_NAMES[t] ?? t

export function AnalysesPanel(p: { noteId: string; credits: Credits }) {
  const ref = useReference()
  const list = useData(() => api<AnalysisList>('GET', `/notes/${p.noteId}/analysis`), [p.noteId])
  const [template, setTemplate] = useState('generic')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const [message, setMessage] = useState<string | null>(null)
  const price = priceOf(ref, 'analysis')
  const generate = async (e: Event) => {
    e.preventDefault()
    setBusy(true)
    setError(null)
    setMessage(null)
    try {
      const r = await api<AnalysisList>('POST', `/notes/${p.noteId}/analysis`, { template }, { idempotencyKey: randomId() })
      list.setData(r)
      const failed = r.report?.failed ?? []
      setMessage(failed.length ? `Not generated: ${failed.map((f) => `${templateName(f.template)} (${f.message})`).join('; ')}. Its credits were given back.` : `${templateName(template)} analysis generated.`)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
      p.credits.refresh()
    }
  }
  const analyses = list.data?.analyses ?? []
  return (
    <>
      <form class="inline-form paid" onSubmit={generate}>
        <label for="template">Template</label>
        <select id="template" value={template} onChange={(e) => setTemplate(e.currentTarget.value)}>
          {(ref?.analysisTemplates ?? ['generic']).map((t) => (
            <option key={t} value={t}>
              {templateName(t)}
              {analyses.some((a) => a.template === t) ? ' (again)' : ''}
            </option>
          ))}
        </select>
        <button type="submit" class="primary" disabled={busy} aria-describedby="analysis-cost">
          {busy ? 'Generating…' : 'Generate analysis'}
        </button>
        <span id="analysis-cost" class="small">
          <Cost credits={price} /> per template{p.credits.left !== null ? `; ${p.credits.left} left` : ''}. A template that does not come out is refunded.
        </span>
      </form>
      <ErrorMessage error={error} />
      <Status message={message} />
      {!list.data ? (
        list.error ? <ErrorMessage error={list.error} /> : <Loading />
      ) : analyses.length === 0 ? (
        <p class="empty" id="no-analyses">
          No analysis yet: pick a template and generate one.
        </p>
      ) : (
        analyses.map((a) => <AnalysisView key={a.template} noteId={p.noteId} analysis={a} />)
      )}
    </>
  )
}

function At(p: { noteId: string; ms: number | null | undefined }) {
  if (p.ms === null || p.ms === undefined) return null
  return (
    <>
      {' '}
      <Link to={timeHref(p.noteId, p.ms)} class="anchor">
        {clock(p.ms)}
      </Link>
    </>
  )
}

function Items(p: { title: string; items: string[]; anchors?: (number | null)[] | undefined; noteId: string; id: string }) {
  if (p.items.length === 0) return null
  return (
    <>
      <h4 id={p.id}>{p.title}</h4>
      <ul aria-labelledby={p.id}>
        {p.items.map((x, i) => (
          <li key={i}>
            {x}
            <At noteId={p.noteId} ms={p.anchors?.[i]} />
          </li>
        ))}
      </ul>
    </>
  )
}

function AnalysisView(p: { noteId: string; analysis: Analysis }) {
  const a = p.analysis
  const id = (part: string) => `a-${a.template}-${part}`
  return (
    <article class="analysis" aria-labelledby={id('title')} data-template={a.template}>
      <h3 id={id('title')}>{templateName(a.template)}</h3>
      <p class="small">
        {when(a.updatedAt)} · {a.model}
      </p>
      <p class="summary">{a.summary}</p>
      <Items title="Key points" items={a.keyPoints} anchors={a.anchors?.keyPoints} noteId={p.noteId} id={id('key-points')} />
      {a.actionItems.length > 0 && (
        <>
          <h4 id={id('actions')}>Action items</h4>
          <ul aria-labelledby={id('actions')}>
            {a.actionItems.map((x, i) => (
              <li key={i}>
                {x.text}
                {x.assignee && <span class="small"> · {x.assignee}</span>}
                {x.deadline && <span class="small"> · by {x.deadline}</span>}
                <At noteId={p.noteId} ms={a.anchors?.actionItems[i]} />
              </li>
            ))}
          </ul>
        </>
      )}
      <Items title="Decisions" items={a.decisions} anchors={a.anchors?.decisions} noteId={p.noteId} id={id('decisions')} />
      <Items title="Questions" items={a.questions} anchors={a.anchors?.questions} noteId={p.noteId} id={id('questions')} />
      {a.topics.length > 0 && (
        <p>
          <strong>Topics:</strong> {a.topics.join(', ')}
        </p>
      )}
      {a.sections &&
        (['positions', 'arguments', 'quotes', 'agreements', 'disagreements'] as const).map((k) =>
          a.sections![k].length === 0 ? null : (
            <section key={k} aria-labelledby={id(k)}>
              <h4 id={id(k)}>{k[0]!.toUpperCase() + k.slice(1)}</h4>
              <ul>
                {a.sections![k].map((x, i) => (
                  <li key={i}>
                    {x.speaker && <strong>{x.speaker}: </strong>}
                    {x.text}
                    <At noteId={p.noteId} ms={x.t} />
                  </li>
                ))}
              </ul>
            </section>
          ),
        )}
      {a.mindmap && (
        <details>
          <summary>Mind map (diagram source)</summary>
          <pre class="mindmap">{a.mindmap}</pre>
        </details>
      )}
    </article>
  )
}
