// Exports: the transcript as a file in each format (GET transcript, as the REST API charges it:
// the price shown on each link), optionally with a translation under each line or instead of it.
import { useState } from 'preact/hooks'
import type { NoteDetail } from '../../api.ts'
import { Cost } from '../../components.tsx'
import { priceOf, useReference } from '../../reference.ts'
import type { Credits } from './shared.ts'

const FORMATS: Record<string, string> = { txt: 'Plain text', md: 'Markdown', srt: 'SubRip subtitles', vtt: 'WebVTT subtitles', json: 'JSON' }

export function ExportPanel(p: { note: NoteDetail; credits: Credits }) {
  const ref = useReference()
  const [translation, setTranslation] = useState('')
  const [mode, setMode] = useState<'both' | 'translation'>('both')
  const base = (p.note.title || 'transcript').replace(/[^\p{L}\p{N} _-]+/gu, '').trim().slice(0, 80) || 'transcript'
  const query = (format: string) => {
    const q = new URLSearchParams({ format })
    if (translation) {
      q.set('translation', translation)
      if (format !== 'json') q.set('translationMode', mode)
    }
    return q.toString()
  }
  return (
    <>
      <p class="small" id="export-cost">
        Each download is a transcript read: <Cost credits={priceOf(ref, 'transcript')} />
        {p.credits.left !== null ? ` (${p.credits.left} left)` : ''}. Reading it on this page is free.
      </p>
      <div class="inline-form">
        <label for="export-translation">With a translation</label>
        <select id="export-translation" value={translation} onChange={(e) => setTranslation(e.currentTarget.value)}>
          <option value="">none</option>
          {(ref?.translationLanguages ?? []).map((l) => (
            <option key={l.code} value={l.code}>
              {l.name} (if translated)
            </option>
          ))}
        </select>
        {translation && (
          <>
            <label for="export-mode">Show</label>
            <select id="export-mode" value={mode} onChange={(e) => setMode(e.currentTarget.value as 'both' | 'translation')}>
              <option value="both">original and translation</option>
              <option value="translation">translation only</option>
            </select>
          </>
        )}
      </div>
      <ul class="exports" id="exports">
        {(ref?.transcriptFormats ?? Object.keys(FORMATS)).map((f) => (
          <li key={f}>
            <a
              class="button"
              href={`/app/api/notes/${p.note.id}/transcript/export?${query(f)}`}
              download={`${base}.${f}`}
              aria-describedby="export-cost"
              onClick={() => setTimeout(p.credits.refresh, 1000)}
            >
              Download .{f}
            </a>{' '}
            <span class="small">{FORMATS[f] ?? f}</span>
          </li>
        ))}
      </ul>
    </>
  )
}
