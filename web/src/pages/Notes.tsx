// The notes list: search and filters in the address (so a search can be bookmarked and found again
// next week), pages by cursor, folders, and adding a recording. While any note on the page is
// processing, the page polls with backoff and the rows move on their own.
import { useEffect, useState } from 'preact/hooks'
import { api, type Folder, type Note, type NoteList, type NoteStatus } from '../api.ts'
import { ConfirmButton, ErrorMessage, Link, Loading, PageTitle, Status, backoff, useData } from '../components.tsx'
import { navigate, useLocation } from '../router.ts'
import { duration, when } from '../format.ts'
import { AddRecording } from './AddRecording.tsx'
import { ProgressView } from '../progress.tsx'

const PAGE_SIZE = 20

interface Filters {
  q: string
  status: '' | NoteStatus
  folderId: string
  tag: string
  since: string
}

const filtersOf = (query: URLSearchParams): Filters => ({
  q: query.get('q') ?? '',
  status: (['processing', 'ready', 'failed'].includes(query.get('status') ?? '') ? query.get('status') : '') as Filters['status'],
  folderId: query.get('folder') ?? '',
  tag: query.get('tag') ?? '',
  since: /^\d{4}-\d\d-\d\d$/.test(query.get('since') ?? '') ? query.get('since')! : '',
})

/** The list query of GET /notes, as any API client sends it. */
function listQuery(f: Filters, cursor: string | null): string {
  const q = new URLSearchParams({ limit: String(PAGE_SIZE) })
  if (cursor) q.set('cursor', cursor)
  if (f.q.trim()) q.set('q', f.q.trim())
  if (f.status) q.set('status', f.status)
  if (f.folderId) q.set('folderId', f.folderId)
  const tags = f.tag.split(',').map((t) => t.trim()).filter(Boolean)
  if (tags.length) q.set('tags', tags.join(','))
  // The day the person picked, from its start in UTC (the dates shown are UTC too).
  if (f.since) q.set('since', `${f.since}T00:00:00.000Z`)
  return q.toString()
}

const addressOf = (f: Filters) => {
  const q = new URLSearchParams()
  if (f.q.trim()) q.set('q', f.q.trim())
  if (f.status) q.set('status', f.status)
  if (f.folderId) q.set('folder', f.folderId)
  if (f.tag.trim()) q.set('tag', f.tag.trim())
  if (f.since) q.set('since', f.since)
  const s = q.toString()
  return `notes${s ? `?${s}` : ''}`
}

export function NotesPage() {
  const { query } = useLocation()
  const applied = filtersOf(query)
  const key = JSON.stringify(applied)
  const [form, setForm] = useState<Filters>(applied)
  useEffect(() => setForm(applied), [key])
  // The cursors of the pages before this one: "Previous page" goes back through them.
  // Kept with the search they belong to: a new search starts at its first page.
  const [paging, setPaging] = useState<{ key: string; cursors: (string | null)[] }>({ key, cursors: [null] })
  const cursors = paging.key === key ? paging.cursors : [null]
  const setCursors = (c: (string | null)[]) => setPaging({ key, cursors: c })
  const cursor = cursors.at(-1) ?? null
  const folders = useData(() => api<{ folders: Folder[] }>('GET', '/folders'), [])
  const notes = useData(
    () => api<NoteList>('GET', `/notes?${listQuery(applied, cursor)}`),
    [key, cursor],
    (d, unchanged) => (d.notes.some((n) => n.status === 'processing') ? backoff(unchanged) : null),
  )
  const filtered = Object.values(applied).some((v) => v !== '')
  const folderName = (id: string | null) => (id ? (folders.data?.folders.find((f) => f.id === id)?.name ?? '—') : '—')
  const set = (patch: Partial<Filters>) => setForm({ ...form, ...patch })

  return (
    <>
      <PageTitle>Notes</PageTitle>
      <AddRecording
        onChange={() => {
          void notes.reload()
          void folders.reload()
        }}
      />

      <section aria-labelledby="find-title">
        <h2 id="find-title">Find notes</h2>
        <form
          class="filters"
          role="search"
          onSubmit={(e) => {
            e.preventDefault()
            navigate(addressOf(form), { replace: true })
          }}
        >
          <div class="field grow">
            <label for="q">Search</label>
            <input id="q" type="search" value={form.q} maxLength={200} placeholder="words in the title, description or transcript" onInput={(e) => set({ q: e.currentTarget.value })} />
          </div>
          <div class="field">
            <label for="status">Status</label>
            <select id="status" value={form.status} onChange={(e) => set({ status: e.currentTarget.value as Filters['status'] })}>
              <option value="">any</option>
              <option value="ready">ready</option>
              <option value="processing">processing</option>
              <option value="failed">failed</option>
            </select>
          </div>
          <div class="field">
            <label for="folder">Folder</label>
            <select id="folder" value={form.folderId} onChange={(e) => set({ folderId: e.currentTarget.value })}>
              <option value="">any</option>
              <option value="null">no folder</option>
              {folders.data?.folders.map((f) => (
                <option key={f.id} value={f.id}>
                  {f.name}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="tag">Tags</label>
            <input id="tag" value={form.tag} maxLength={200} placeholder="e.g. client, q3" onInput={(e) => set({ tag: e.currentTarget.value })} />
          </div>
          <div class="field">
            <label for="since">Created since</label>
            <input id="since" type="date" value={form.since} onInput={(e) => set({ since: e.currentTarget.value })} />
          </div>
          <div class="field buttons">
            <button type="submit" class="primary">
              Search
            </button>
            {filtered && (
              <button type="button" class="quiet" onClick={() => navigate('notes', { replace: true })}>
                Clear
              </button>
            )}
          </div>
        </form>
      </section>

      <section aria-labelledby="list-title">
        <h2 id="list-title" class="visually-hidden">
          {filtered ? 'Notes found' : 'All notes'}
        </h2>
        <ErrorMessage error={notes.error} />
        {notes.error && !notes.data ? (
          <p>
            <button type="button" onClick={() => void notes.reload()}>
              Try again
            </button>
          </p>
        ) : !notes.data ? (
          <Loading />
        ) : notes.data.notes.length === 0 ? (
          <p id="notes-empty" class="empty">
            {filtered ? 'No note matches these filters.' : cursors.length > 1 ? 'No more notes.' : 'No notes yet: add a recording above, or import a link.'}
          </p>
        ) : (
          <table class="data" id="notes">
            <caption>
              {filtered ? 'Notes found' : 'Your notes'}, newest first{cursors.length > 1 ? `, page ${cursors.length}` : ''}
            </caption>
            <thead>
              <tr>
                <th scope="col">Title</th>
                <th scope="col">Status</th>
                <th scope="col">Length</th>
                <th scope="col">Folder</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {notes.data.notes.map((n) => (
                <NoteRow key={n.id} note={n} folder={folderName(n.folderId)} />
              ))}
            </tbody>
          </table>
        )}
        {notes.data && (cursors.length > 1 || notes.data.hasMore) && (
          <nav aria-label="Pages of notes" class="pager">
            <button type="button" disabled={cursors.length <= 1} onClick={() => setCursors(cursors.slice(0, -1))}>
              Previous page
            </button>
            <span class="small">Page {cursors.length}</span>
            <button type="button" disabled={!notes.data.hasMore || !notes.data.nextCursor} onClick={() => setCursors([...cursors, notes.data!.nextCursor])}>
              Next page
            </button>
          </nav>
        )}
      </section>

      <Folders folders={folders.data?.folders ?? null} error={folders.error} reload={() => void folders.reload()} />
    </>
  )
}

function NoteRow(p: { note: Note; folder: string }) {
  const n = p.note
  return (
    <tr data-note-id={n.id} data-status={n.status}>
      <th scope="row">
        <Link to={`notes/${n.id}`}>{n.title || 'Untitled'}</Link>
        {n.tags.length > 0 && (
          <span class="tags" aria-label="Tags">
            {n.tags.map((t) => (
              <span key={t} class="tag">
                {t}
              </span>
            ))}
          </span>
        )}
      </th>
      <td data-label="Status">
        <ProgressView progress={n.progress} status={n.status} errorCode={n.errorCode} errorMessage={n.errorMessage} id={n.id} />
      </td>
      <td data-label="Length">{duration(n.durationSeconds)}</td>
      <td data-label="Folder">{p.folder}</td>
      <td data-label="Created">{when(n.createdAt)}</td>
    </tr>
  )
}

/** Folders: make, rename, delete (its notes move to no folder). Notes go into one from their page. */
function Folders(p: { folders: Folder[] | null; error: unknown; reload: () => void }) {
  const [name, setName] = useState('')
  const [error, setError] = useState<unknown>(null)
  const [message, setMessage] = useState<string | null>(null)
  const act = async (what: () => Promise<unknown>, done: string) => {
    setError(null)
    try {
      await what()
      setMessage(done)
      p.reload()
    } catch (err) {
      setError(err)
    }
  }
  return (
    <section aria-labelledby="folders-title">
      <h2 id="folders-title">Folders</h2>
      <ErrorMessage error={p.error ?? error} />
      <Status message={message} />
      {p.folders === null ? (
        <Loading />
      ) : (
        <ul class="folders">
          {p.folders.length === 0 && <li>No folders yet.</li>}
          {p.folders.map((f) => (
            <FolderItem key={f.id} folder={f} act={act} />
          ))}
        </ul>
      )}
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault()
          if (!name.trim()) return
          void act(() => api('POST', '/folders', { name: name.trim() }), `Folder ${name.trim()} made.`).then(() => setName(''))
        }}
      >
        <label for="new-folder">New folder</label>
        <input id="new-folder" value={name} maxLength={100} onInput={(e) => setName(e.currentTarget.value)} />
        <button type="submit">Make folder</button>
      </form>
    </section>
  )
}

function FolderItem(p: { folder: Folder; act: (what: () => Promise<unknown>, done: string) => Promise<void> }) {
  const f = p.folder
  const [renaming, setRenaming] = useState(false)
  const [name, setName] = useState(f.name)
  if (renaming) {
    return (
      <li>
        <form
          class="inline-form"
          onSubmit={(e) => {
            e.preventDefault()
            void p.act(() => api('PATCH', `/folders/${f.id}`, { name: name.trim() }), `Folder renamed to ${name.trim()}.`).then(() => setRenaming(false))
          }}
        >
          <label for={`folder-${f.id}`}>New name of {f.name}</label>
          <input id={`folder-${f.id}`} value={name} maxLength={100} required onInput={(e) => setName(e.currentTarget.value)} />
          <button type="submit">Save</button>
          <button type="button" class="quiet" onClick={() => setRenaming(false)}>
            Cancel
          </button>
        </form>
      </li>
    )
  }
  return (
    <li>
      <Link to={`notes?folder=${f.id}`}>{f.name}</Link> <span class="small">({f.noteCount})</span>{' '}
      <button type="button" class="quiet" aria-label={`Rename ${f.name}`} onClick={() => setRenaming(true)}>
        Rename
      </button>
      <ConfirmButton label={`Delete ${f.name}`} confirmLabel={`Delete folder ${f.name} (its notes stay, in no folder)`} onConfirm={() => p.act(() => api('DELETE', `/folders/${f.id}`), `Folder ${f.name} deleted.`)} />
    </li>
  )
}
