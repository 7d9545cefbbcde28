// Where a note is, in words: ready; failed, with what its errorCode means and what to do next
// (the shared table); or its stage and percent with a progress bar.
import type { NoteStatus, Progress } from './api.ts'
import { failureAdvice, useReference } from './reference.ts'

export const STAGES: Record<string, string> = {
  awaiting_upload: 'waiting for the upload',
  queued: 'queued',
  downloading: 'downloading',
  decoding: 'decoding',
  transcribing: 'transcribing',
  diarizing: 'telling speakers apart',
  indexing: 'indexing',
}

export function ProgressView(p: { progress: Progress | null; status: NoteStatus; errorCode: string | null; errorMessage?: string | null; id: string }) {
  const ref = useReference()
  if (p.status === 'ready') return <span class="badge ok">ready</span>
  if (p.status === 'failed') {
    const advice = failureAdvice(ref, p.errorCode)
    return (
      <span class="progress-cell">
        <span class="badge bad">failed{p.errorCode ? `: ${p.errorCode}` : ''}</span>
        {advice && <span class="failure-sentence"> {advice.sentence}</span>}
        {p.errorMessage && <span class="small error-message"> {p.errorMessage}</span>}
        {advice && <span class="small failure-next"> {advice.next}</span>}
      </span>
    )
  }
  const stage = p.progress ? (STAGES[p.progress.stage] ?? p.progress.stage) : 'processing'
  return (
    <span class="progress-cell">
      <span class="badge busy">processing</span> <span id={`stage-${p.id}`}>{stage}</span>
      {p.progress?.percent != null && <span class="small"> {Math.round(p.progress.percent)}%</span>}
      {p.progress && p.progress.attempt > 1 && <span class="small"> (attempt {p.progress.attempt})</span>}
      <progress aria-labelledby={`stage-${p.id}`} max={100} value={p.progress?.percent ?? undefined} />
    </span>
  )
}

