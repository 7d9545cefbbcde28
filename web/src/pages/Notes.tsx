import { api, type Note, type Progress } from '../api.ts'
import { ErrorMessage, Link, Loading, PageTitle, useData } from '../components.tsx'
import { duration, when } from '../format.ts'

const STAGES: Record<string, string> = {
  awaiting_upload: 'waiting for the upload',
  queued: 'queued',
  downloading: 'downloading',
  decoding: 'decoding',
  transcribing: 'transcribing',
  diarizing: 'telling speakers apart',
  indexing: 'indexing',
}

export function ProgressView(p: { progress: Progress | null; status: Note['status']; errorCode: string | null; errorMessage?: string | null; id: string }) {
  if (p.status === 'ready') return <span class="badge ok">ready</span>
  if (p.status === 'failed')
    return (
      <span class="progress-cell">
        <span class="badge bad">failed{p.errorCode ? `: ${p.errorCode}` : ''}</span>
        {p.errorMessage && <span class="small error-message"> {p.errorMessage}</span>}
      </span>
    )
  const stage = p.progress ? (STAGES[p.progress.stage] ?? p.progress.stage) : 'processing'
  return (
    <span class="progress-cell">
      <span class="badge busy">processing</span> <span id={`stage-${p.id}`}>{stage}</span>
      {p.progress?.percent != null && <span class="small"> {p.progress.percent}%</span>}
      <progress aria-labelledby={`stage-${p.id}`} max={100} value={p.progress?.percent ?? undefined} />
    </span>
  )
}

export function NotesPage() {
  // While anything is processing, the list refreshes every second so progress moves on its own.
  const notes = useData(
    () => api<{ notes: Note[]; nextCursor: string | null }>('GET', '/notes?limit=50'),
    [],
    (d) => (d.notes.some((n) => n.status === 'processing') ? 1000 : null),
  )
  return (
    <>
      <PageTitle>Notes</PageTitle>
      <p>
        Your newest notes. Add notes with the REST API (<code>POST /v1/notes</code>) or an MCP client; they show here while they are transcribed.
      </p>
      <ErrorMessage error={notes.error} />
      {!notes.data ? (
        <Loading />
      ) : (
        <table class="data" id="notes">
          <caption>{notes.data.notes.length === 0 ? 'No notes yet' : `${notes.data.notes.length} newest notes`}</caption>
          <thead>
            <tr>
              <th scope="col">Title</th>
              <th scope="col">Status</th>
              <th scope="col">Source</th>
              <th scope="col">Length</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {notes.data.notes.map((n) => (
              <tr key={n.id} data-note-id={n.id} data-status={n.status}>
                <th scope="row">
                  <Link to={`notes/${n.id}`}>{n.title || 'Untitled'}</Link>
                </th>
                <td>
                  <ProgressView progress={n.progress} status={n.status} errorCode={n.errorCode} errorMessage={n.errorMessage} id={n.id} />
                </td>
                <td>{n.origin}</td>
                <td>{duration(n.durationSeconds)}</td>
                <td>{when(n.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  )
}
