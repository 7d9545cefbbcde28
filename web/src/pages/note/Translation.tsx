// Translations: pick a language, request it (free the first time), watch it progress (polled with
// backoff), read it line by line beside the original. A stale translation (the transcript changed
// after it) is marked, its missing lines too, and can be completed (free).
import { useState } from 'preact/hooks'
import { api, type Transcript, type TranslationState } from '../../api.ts'
import { Cost, ErrorMessage, Loading, backoff, useData } from '../../components.tsx'
import { clock, when } from '../../format.ts'
import { priceOf, useReference } from '../../reference.ts'

const STATUS: Record<TranslationState['status'], string> = { none: 'not requested', pending: 'queued', running: 'translating', ready: 'ready', failed: 'failed' }

export function TranslationPanel(p: { noteId: string; sourceLanguage: string | null }) {
  const ref = useReference()
  const source = p.sourceLanguage?.split('-')[0] ?? null
  const languages = (ref?.translationLanguages ?? []).filter((l) => l.code !== source)
  const [language, setLanguage] = useState<string | null>(null)
  const chosen = language ?? languages[0]?.code ?? 'en'
  const state = useData(
    () => api<TranslationState>('GET', `/notes/${p.noteId}/transcript/translation?language=${chosen}`),
    [p.noteId, chosen],
    (s, unchanged) => (s.status === 'pending' || s.status === 'running' ? backoff(unchanged) : null),
  )
  const transcript = useData(() => api<Transcript>('GET', `/notes/${p.noteId}/transcript`), [p.noteId])
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const s = state.data
  const request = async () => {
    setBusy(true)
    setError(null)
    try {
      state.setData(await api<TranslationState>('POST', `/notes/${p.noteId}/transcript/translation`, { language: chosen }))
      void state.reload()
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  const original = new Map((transcript.data?.segments ?? []).map((x) => [x.sequence, x.text]))
  const stale = new Set(s?.staleSegments ?? [])
  return (
    <>
      <div class="inline-form">
        <label for="language">Translate into</label>
        <select id="language" value={chosen} onChange={(e) => setLanguage(e.currentTarget.value)}>
          {languages.map((l) => (
            <option key={l.code} value={l.code}>
              {l.name}
            </option>
          ))}
        </select>
        {s && (s.status === 'none' || s.status === 'failed' || s.stale) && (
          <>
            <button type="button" class="primary" disabled={busy} onClick={() => void request()} aria-describedby="translation-cost">
              {s.stale ? 'Translate the changed lines' : s.status === 'failed' ? 'Try again' : 'Translate'}
            </button>
            <span id="translation-cost" class="small">
              <Cost credits={priceOf(ref, 'translation')} />
            </span>
          </>
        )}
      </div>
      <ErrorMessage error={error ?? state.error} />
      {!s ? (
        <Loading />
      ) : (
        <>
          <p id="translation-status" data-status={s.status} data-stale={String(s.stale)}>
            <strong>{STATUS[s.status]}</strong>
            {(s.status === 'pending' || s.status === 'running') && (
              <>
                {' '}
                {s.progress.translatedSegments} of {s.progress.totalSegments} lines{' '}
                <progress max={100} value={s.progress.percent} aria-label="Translation progress" />
              </>
            )}
            {s.status === 'ready' && s.completedAt && <span class="small"> {when(s.completedAt)}</span>}
            {s.status === 'failed' && <span class="error"> {s.message ?? s.errorCode}</span>}
          </p>
          {s.stale && (
            <p class="notice" id="translation-stale">
              Stale: the transcript changed after this translation, so {s.staleSegments.length} line(s) are missing their translation again (marked below).
            </p>
          )}
          {s.segments.some((x) => x.text !== null) && (
            <table class="data translation" id="translation">
              <caption>Translation, line by line</caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Original</th>
                  <th scope="col">Translation</th>
                </tr>
              </thead>
              <tbody>
                {s.segments.map((x) => (
                  <tr key={x.sequence} class={stale.has(x.sequence) ? 'stale' : ''}>
                    <td data-label="Time">{clock(x.startMs)}</td>
                    <td data-label="Original">{original.get(x.sequence) ?? ''}</td>
                    <td data-label="Translation">{x.text ?? (stale.has(x.sequence) ? '(stale: to be translated again)' : '—')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </>
  )
}
