// import_from_url: POST /v1/notes with `audioUrl`, over MCP: the same command, so the same
// checks, the same credit hold and the same ledger entries.
import { CreateNoteResponse } from '../../contract/notes.ts'
import { ImportFromUrlInput } from '../../contract/mcp.ts'
import { defineTool } from '../tool.ts'

export const importFromUrl = defineTool({
  name: 'import_from_url',
  title: 'Import audio or video from a link',
  description:
    'Creates a note from a public link (a video page, a podcast feed or directory page, or a direct audio/video file) and queues its transcription. ' +
    'Returns `noteId`, `status` ("processing"), `provider` and `next`. Then call wait_for_transcription with the noteId. Not enough credits answers insufficient_credits with balance and required.',
  input: ImportFromUrlInput,
  output: CreateNoteResponse,
  readOnly: false,
  openWorld: true,
  async handle({ app, caller }, { idempotencyKey, ...body }) {
    const created = await app.notes.create(caller, body, idempotencyKey)
    return { ...created, next: `Call wait_for_transcription with noteId ${created.noteId} until its status is "ready" (or "failed", with errorCode). ${created.next.replace(/^Poll [^.]*\.\s*/, '')}` }
  },
})
