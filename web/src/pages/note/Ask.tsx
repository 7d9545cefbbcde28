// Questions about the note: the answer quotes the audio as [mm:ss]; each quote and each cited line
// is a button that plays from that second. A follow-up continues the conversation (sessionId).
import { useState } from 'preact/hooks'
import { api, randomId, type Answer, type Transcript } from '../../api.ts'
import { Cost, ErrorMessage, useData } from '../../components.tsx'
import { clock } from '../../format.ts'
import { priceOf, useReference } from '../../reference.ts'
import type { Credits } from './shared.ts'

const QUOTE = /\[(\d{1,3}):(\d\d)\]/g

/** The answer's text with every [mm:ss] turned into a button that plays from there. */
function AnswerText(p: { text: string; seek: (ms: number) => void }) {
  const parts: (string | { label: string; ms: number })[] = []
  let last = 0
  for (const m of p.text.matchAll(QUOTE)) {
    parts.push(p.text.slice(last, m.index))
    parts.push({ label: m[0], ms: (Number(m[1]) * 60 + Number(m[2])) * 1000 })
    last = m.index! + m[0].length
  }
  parts.push(p.text.slice(last))
  return (
    <p class="answer-text">
      {parts.map((x, i) =>
        typeof x === 'string' ? (
          x
        ) : (
          <button key={i} type="button" class="cite" aria-label={`Play from ${clock(x.ms)}`} data-ms={x.ms} onClick={() => p.seek(x.ms)}>
            {x.label}
          </button>
        ),
      )}
    </p>
  )
}

export function AskPanel(p: { noteId: string; credits: Credits; seek: (ms: number) => void }) {
  const ref = useReference()
  // The cited lines by id (the free transcript view: reading it here costs nothing).
  const transcript = useData(() => api<Transcript>('GET', `/notes/${p.noteId}/transcript`), [p.noteId])
  const [question, setQuestion] = useState('')
  const [turns, setTurns] = useState<Answer[]>([])
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const segments = new Map((transcript.data?.segments ?? []).map((s) => [s.id, s]))
  const sessionId = turns.at(-1)?.sessionId
  return (
    <>
      {turns.map((a, i) => (
        <article key={i} class="answer" aria-label={`Answer ${i + 1}`}>
          <p class="question">
            <strong>Q:</strong> {a.question}
          </p>
          <AnswerText text={a.answer} seek={p.seek} />
          {a.citedSegments.length > 0 && (
            <>
              <h4>Cited lines</h4>
              <ul class="cited">
                {a.citedSegments.map((id) => {
                  const s = segments.get(id)
                  return (
                    <li key={id}>
                      {s ? (
                        <button type="button" class="cite" data-ms={s.startMs} onClick={() => p.seek(s.startMs)}>
                          {clock(s.startMs)}
                        </button>
                      ) : null}{' '}
                      {s?.text ?? 'a line outside the preview'}
                    </li>
                  )
                })}
              </ul>
            </>
          )}
        </article>
      ))}
      <form
        class="ask paid"
        onSubmit={async (e) => {
          e.preventDefault()
          setBusy(true)
          setError(null)
          try {
            const a = await api<Answer>('POST', `/notes/${p.noteId}/ask`, { question: question.trim(), ...(sessionId ? { sessionId } : {}) }, { idempotencyKey: randomId() })
            setTurns([...turns, a])
            setQuestion('')
          } catch (err) {
            setError(err)
          } finally {
            setBusy(false)
            p.credits.refresh()
          }
        }}
      >
        <label for="question">{turns.length ? 'Ask a follow-up' : 'Ask a question about this note'}</label>
        <textarea id="question" rows={3} required maxLength={4000} value={question} onInput={(e) => setQuestion(e.currentTarget.value)} />
        <button type="submit" class="primary" disabled={busy || !question.trim()} aria-describedby="ask-cost">
          {busy ? 'Asking…' : 'Ask'}
        </button>{' '}
        <span id="ask-cost" class="small">
          <Cost credits={priceOf(ref, 'ask')} /> per question{p.credits.left !== null ? `; ${p.credits.left} left` : ''}; refunded when the model does not answer.
        </span>
      </form>
      <ErrorMessage error={error} />
    </>
  )
}
