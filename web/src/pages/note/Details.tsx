// A note's details: title, description, tags and folder (PATCH, as the REST API), whether the
// audio is kept past the retention window, and deleting the note for good.
import { useState } from 'preact/hooks'
import { api, type Folder, type NoteDetail } from '../../api.ts'
import { ConfirmButton, ErrorMessage, Status, useData } from '../../components.tsx'
import { navigate } from '../../router.ts'

export function DetailsPanel(p: { note: NoteDetail; onSaved: (n: Partial<NoteDetail>) => void }) {
  const n = p.note
  const folders = useData(() => api<{ folders: Folder[] }>('GET', '/folders'), [])
  const [title, setTitle] = useState(n.title)
  const [description, setDescription] = useState(n.description ?? '')
  const [tags, setTags] = useState(n.tags.join(', '))
  const [folderId, setFolderId] = useState(n.folderId ?? '')
  const [keepAudio, setKeepAudio] = useState(n.keepAudio)
  const [error, setError] = useState<unknown>(null)
  const [message, setMessage] = useState<string | null>(null)
  const [deleteError, setDeleteError] = useState<unknown>(null)
  return (
    <>
      <form
        class="details"
        onSubmit={async (e) => {
          e.preventDefault()
          setError(null)
          setMessage(null)
          const tagList = [...new Set(tags.split(',').map((t) => t.trim()).filter(Boolean))]
          try {
            const saved = await api<NoteDetail>('PATCH', `/notes/${n.id}`, {
              title: title.trim(),
              description: description.trim() ? description : null,
              tags: tagList,
              folderId: folderId || null,
              ...(n.sourceType === 'url' ? {} : { keepAudio }),
            })
            p.onSaved(saved)
            setTags(saved.tags.join(', '))
            setMessage('Saved.')
          } catch (err) {
            setError(err)
          }
        }}
      >
        <label for="title">Title</label>
        <input id="title" value={title} required maxLength={200} onInput={(e) => setTitle(e.currentTarget.value)} />
        <label for="description">Description</label>
        <textarea id="description" rows={4} maxLength={5000} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        <label for="tags">Tags</label>
        <input id="tags" value={tags} aria-describedby="tags-help" onInput={(e) => setTags(e.currentTarget.value)} />
        <p class="small" id="tags-help">
          Separated by commas; each up to 50 characters.
        </p>
        <label for="note-folder">Folder</label>
        <select id="note-folder" value={folderId} onChange={(e) => setFolderId(e.currentTarget.value)}>
          <option value="">no folder</option>
          {folders.data?.folders.map((f) => (
            <option key={f.id} value={f.id}>
              {f.name}
            </option>
          ))}
        </select>
        {n.sourceType !== 'url' && (
          <label class="check">
            <input type="checkbox" checked={keepAudio} onChange={(e) => setKeepAudio(e.currentTarget.checked)} /> Keep the audio beyond the retention window
          </label>
        )}
        <button type="submit" class="primary">
          Save details
        </button>
      </form>
      <ErrorMessage error={error} />
      <Status message={message} />
      <h3>Delete</h3>
      <p class="small">The transcript, translations, analyses, outline, deliverables and audio go for good; the credit history stays.</p>
      <ConfirmButton
        label="Delete note"
        confirmLabel={`Delete “${n.title || 'Untitled'}” and everything made from it`}
        onConfirm={async () => {
          try {
            await api('DELETE', `/notes/${n.id}`)
            navigate('notes')
          } catch (err) {
            setDeleteError(err)
          }
        }}
      />
      <ErrorMessage error={deleteError} />
    </>
  )
}
