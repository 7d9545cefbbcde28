// A failed note says what went wrong in words (`errorMessage`, an extension) wherever its code
// appears: GET /v1/notes/{id}, the list, the dashboard's note, and MCP's get_note and
// wait_for_transcription, whose advice depends on whose move it is (a server problem is not
// fixed by importing again). Issue 16, item 5.
import t from 'tap'
import { join } from 'node:path'
import { readFile } from 'node:fs/promises'
import { mcpTestService, structured } from './support/mcp.ts'
import { tempDir } from './support/tmp.ts'
import { startHttpServer } from './support/httpServer.ts'
import { createImport, dialogue, waitForNote } from './support/pipeline.ts'
import { faultOf, NOTE_ERROR_CODES } from '../domain/notes/transcriptionJob.ts'
import { noteFailureAdvice } from '../domain/advice.ts'

const failureAdvice = (code: string) => noteFailureAdvice(code).next
import { Note } from '../contract/notes.ts'

const tmp = tempDir('pipeline-errmsg-')
t.teardown(tmp.remove)
const web = await startHttpServer({
  '/talk.mp3': { body: await readFile(await dialogue(tmp.dir)), headers: { 'content-type': 'audio/mpeg' } },
  '/gone.mp3': { status: 404, body: 'no' },
})
t.teardown(web.close)

// The local engine without its model: every note fails asr_model_missing, the server's problem.
const s = await mcpTestService({
  workers: true,
  env: { IMPORT_ALLOW_HOSTS: '127.0.0.1', ASR_ENGINE: 'whisper', WHISPER_MODEL_PATH: join(tmp.dir, 'no-such-model.bin'), JOB_POLL_MS: '20', JOB_PROGRESS_INTERVAL_MS: '20', JOB_MAX_ATTEMPTS: '1' },
})
t.teardown(s.close)

t.test('every error code has a fault, and only source problems advise importing again', async (t) => {
  for (const code of Object.keys(NOTE_ERROR_CODES)) t.ok(['source', 'audio', 'account', 'request', 'server'].includes(faultOf(code)), code)
  t.equal(faultOf('asr_model_missing'), 'server')
  t.equal(faultOf('something_new'), 'server', 'an unknown code is not blamed on the user')
  t.match(failureAdvice('source_not_found'), /import it again/)
  for (const code of ['asr_model_missing', 'asr_model_invalid', 'internal_error', 'processing_timeout', 'videosite_unavailable', 'no_speech']) {
    t.notMatch(failureAdvice(code), /^(Check|Import|Top)/, `${code}: no re-import advice`)
    t.match(failureAdvice(code), /will not help/, code)
  }
})

t.test('given a server without a speech model, then the note, the list and MCP say what to set, and MCP does not advise importing again', async (t) => {
  const a = await s.account('pro')
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/talk.mp3') })
  const { note } = await waitForNote(s, a.headers, noteId)
  t.match(note, { status: 'failed', errorCode: 'asr_model_missing', errorMessage: /WHISPER_MODEL_PATH|no-such-model/ })
  t.ok(Note.safeParse(note).success, 'the contract has the field')
  const list = (await s.inject({ method: 'GET', url: '/v1/notes', headers: a.headers })).json()
  t.match(list.notes.find((n: { id: string }) => n.id === noteId), { errorMessage: note.errorMessage })

  const c = await s.connect(s.mcpUrl, a.headers)
  t.teardown(() => c.close())
  const got = structured(await c.callTool({ name: 'get_note', arguments: { noteId } }))
  t.equal(got.errorMessage, note.errorMessage)
  const waited = structured(await c.callTool({ name: 'wait_for_transcription', arguments: { noteId, timeoutSeconds: 1 } }))
  t.match(waited, { status: 'failed', errorCode: 'asr_model_missing', errorMessage: note.errorMessage, finished: true })
  t.notMatch(waited.next, /import (the link|it) again or try another source/, 'no re-import advice for a server problem')
  t.match(waited.next, /server/)
  t.match(waited.next, /no-such-model|WHISPER_MODEL_PATH/, 'the next step carries the actionable text')
})

t.test('given a link that answers 404, then MCP advises another source, and a ready note has no errorMessage', async (t) => {
  const a = await s.account('pro')
  const noteId = await createImport(s, a.headers, { audioUrl: web.url('/gone.mp3') })
  const { note } = await waitForNote(s, a.headers, noteId)
  t.match(note, { status: 'failed', errorCode: 'source_not_found', errorMessage: /answered 404/ })
  const c = await s.connect(s.mcpUrl, a.headers)
  t.teardown(() => c.close())
  const waited = structured(await c.callTool({ name: 'wait_for_transcription', arguments: { noteId, timeoutSeconds: 1 } }))
  t.match(waited.next, /import it again or try another source/)
  const fresh = await createImport(s, a.headers, { audioUrl: web.url('/talk.mp3') })
  t.match((await s.inject({ method: 'GET', url: `/v1/notes/${fresh}`, headers: a.headers })).json(), { errorMessage: null })
})
