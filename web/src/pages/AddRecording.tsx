// Adding a recording from the browser, the way any API client does it: a file goes through the
// presigned flow (POST /notes with filename, contentType and fileSizeBytes; PUT the bytes to
// `upload.url` with `upload.headers`, with a real progress bar; POST /notes/{id}/finalize), a link
// through POST /notes with `audioUrl`. Each one then shows the note's stage and percent, polled
// with backoff, until it is ready or failed, without a reload.
import { useRef, useState } from 'preact/hooks'
import { api, putFile, randomId, type AccountStatus, type CreatedNote, type NoteDetail } from '../api.ts'
import { Cost, ErrorMessage, Link, backoff, useData } from '../components.tsx'
import { bytes, number } from '../format.ts'
import { priceOf, useReference } from '../reference.ts'
import { ProgressView } from '../progress.tsx'

interface Job {
  /** Local id (a note id comes later, after create). */
  key: string
  label: string
  noteId: string | null
  phase: 'uploading' | 'finalizing' | 'processing' | 'failed-to-start'
  sent: number
  total: number
  error: unknown
}

/** Content types the browser does not always name (a .m4a dropped on Linux often has none). */
const BY_EXTENSION: Record<string, string> = { mp3: 'audio/mpeg', m4a: 'audio/mp4', wav: 'audio/wav', ogg: 'audio/ogg', opus: 'audio/ogg', flac: 'audio/flac', webm: 'audio/webm', aac: 'audio/aac', mp4: 'video/mp4', mov: 'video/quicktime', mkv: 'video/x-matroska' }
const contentTypeOf = (f: File) => f.type || BY_EXTENSION[f.name.split('.').pop()?.toLowerCase() ?? ''] || 'application/octet-stream'

export function AddRecording(p: { onChange: () => void }) {
  const ref = useReference()
  const status = useData(() => api<AccountStatus>('GET', '/account/status'), [])
  const [jobs, setJobs] = useState<Job[]>([])
  const [title, setTitle] = useState('')
  const [link, setLink] = useState('')
  const [linkError, setLinkError] = useState<unknown>(null)
  const [dragging, setDragging] = useState(false)
  const fileInput = useRef<HTMLInputElement>(null)
  const update = (key: string, patch: Partial<Job>) => setJobs((all) => all.map((j) => (j.key === key ? { ...j, ...patch } : j)))

  const upload = async (file: File) => {
    const key = randomId()
    const name = title.trim() || file.name.replace(/\.[A-Za-z0-9]{1,5}$/, '') || file.name
    setJobs((all) => [{ key, label: name, noteId: null, phase: 'uploading', sent: 0, total: file.size, error: null }, ...all])
    setTitle('')
    try {
      const created = await api<CreatedNote>(
        'POST',
        '/notes',
        { filename: file.name, contentType: contentTypeOf(file), fileSizeBytes: file.size, ...(title.trim() ? { title: title.trim() } : {}) },
        { idempotencyKey: `upload-${key}` },
      )
      update(key, { noteId: created.noteId })
      p.onChange()
      await putFile(created.upload!.url, created.upload!.headers, file, (sent, total) => update(key, { sent, total }))
      update(key, { phase: 'finalizing' })
      await api('POST', `/notes/${created.noteId}/finalize`, {})
      update(key, { phase: 'processing' })
      p.onChange()
      void status.reload()
    } catch (err) {
      update(key, { phase: 'failed-to-start', error: err })
    }
  }

  const importLink = async (e: Event) => {
    e.preventDefault()
    setLinkError(null)
    const key = randomId()
    try {
      const created = await api<CreatedNote>('POST', '/notes', { audioUrl: link.trim(), ...(title.trim() ? { title: title.trim() } : {}) }, { idempotencyKey: `import-${key}` })
      setJobs((all) => [{ key, label: title.trim() || link.trim(), noteId: created.noteId, phase: 'processing', sent: 0, total: 0, error: null }, ...all])
      setLink('')
      setTitle('')
      p.onChange()
      void status.reload()
    } catch (err) {
      setLinkError(err)
    }
  }

  const minutes = status.data?.usage.uploadMinutes
  const importPrice = priceOf(ref, 'import')
  return (
    <section aria-labelledby="add-title" class="add">
      <h2 id="add-title">Add a recording</h2>
      <div class="field title-field">
        <label for="new-title">Title of the next recording (optional)</label>
        <input id="new-title" value={title} maxLength={200} onInput={(e) => setTitle(e.currentTarget.value)} />
      </div>
      <div class="add-grid">
        <div
          class={`dropzone${dragging ? ' dragging' : ''}`}
          onDragOver={(e) => {
            e.preventDefault()
            setDragging(true)
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={(e) => {
            e.preventDefault()
            setDragging(false)
            for (const f of Array.from(e.dataTransfer?.files ?? [])) void upload(f)
          }}
        >
          <label for="file">Upload audio or video</label>
          <p class="small" id="file-help">
            Drop files here or choose them.{' '}
            {minutes ? `Uploads count against this month’s upload minutes: ${number(minutes.used)} of ${number(minutes.quota)} used.` : ''}
          </p>
          <input
            id="file"
            ref={fileInput}
            type="file"
            accept="audio/*,video/*"
            multiple
            aria-describedby="file-help"
            onChange={(e) => {
              for (const f of Array.from(e.currentTarget.files ?? [])) void upload(f)
              e.currentTarget.value = ''
            }}
          />
        </div>
        <form class="import" onSubmit={importLink}>
          <label for="link">Or import a link</label>
          <p class="small" id="link-help">
            A public audio or video file, a video page or a podcast. <Cost credits={importPrice} per="per started minute" />; {importPrice ?? 50} are held when the link is
            accepted.
          </p>
          <div class="inline-form">
            <input id="link" type="url" required value={link} maxLength={2000} placeholder="https://…" aria-describedby="link-help" onInput={(e) => setLink(e.currentTarget.value)} />
            <button type="submit">Import</button>
          </div>
          <ErrorMessage error={linkError} />
        </form>
      </div>
      {jobs.length > 0 && (
        <ul class="jobs" aria-label="Recordings being added">
          {jobs.map((j) => (
            <JobView key={j.key} job={j} onSettled={p.onChange} />
          ))}
        </ul>
      )}
    </section>
  )
}

function JobView(p: { job: Job; onSettled: () => void }) {
  const j = p.job
  const settled = useRef(false)
  // Once the bytes are in, the note's own progress: stage and percent, polled with backoff.
  const note = useData(
    () => (j.phase === 'processing' && j.noteId ? api<NoteDetail>('GET', `/notes/${j.noteId}`) : Promise.resolve(null)),
    [j.phase, j.noteId],
    (n, unchanged) => {
      if (n && n.status !== 'processing' && !settled.current) {
        settled.current = true
        p.onSettled()
      }
      return n && n.status === 'processing' ? backoff(unchanged) : null
    },
  )
  const n = note.data
  const percent = j.total > 0 ? Math.round((j.sent / j.total) * 100) : 0
  return (
    <li class="job" data-job-note={j.noteId ?? ''} data-phase={n ? n.status : j.phase}>
      <span class="job-title">{j.noteId ? <Link to={`notes/${j.noteId}`}>{j.label}</Link> : j.label}</span>{' '}
      {j.phase === 'uploading' && (
        <span class="progress-cell">
          <span id={`up-${j.key}`}>
            uploading {bytes(j.sent)} of {bytes(j.total)} ({percent}%)
          </span>
          <progress class="upload-progress" aria-labelledby={`up-${j.key}`} max={j.total || 1} value={j.sent} />
        </span>
      )}
      {j.phase === 'finalizing' && <span>checking the file…</span>}
      {j.phase === 'failed-to-start' && <ErrorMessage error={j.error} />}
      {j.phase === 'processing' && (n ? <ProgressView progress={n.progress} status={n.status} errorCode={n.errorCode} errorMessage={n.errorMessage} id={`job-${n.id}`} /> : <span>queued</span>)}
      <ErrorMessage error={note.error} />
    </li>
  )
}
