// An upload as a client makes it: create the note, PUT the bytes to its upload URL, finalize.
import type { TestService } from './service.ts'

export async function uploadNote(s: TestService, headers: Record<string, string>, bytes: Buffer, filename = 'audio.mp3', contentType = 'audio/mpeg') {
  const json = { 'content-type': 'application/json' }
  const created = await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...headers, ...json }, payload: JSON.stringify({ filename, contentType }) })
  if (created.statusCode !== 201 && created.statusCode !== 202) throw new Error(`create answered ${created.statusCode}: ${created.body}`)
  const noteId = created.json().noteId as string
  const u = new URL(created.json().upload.url)
  const put = await s.inject({ method: 'PUT', url: u.pathname + u.search, headers: { 'content-type': contentType }, payload: bytes })
  if (put.statusCode >= 300) throw new Error(`PUT answered ${put.statusCode}: ${put.body}`)
  const finalized = await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/finalize`, headers: { ...headers, ...json }, payload: '{}' })
  return { noteId, finalize: { status: finalized.statusCode, body: finalized.json() as Record<string, unknown> } }
}
