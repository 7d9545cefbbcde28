// Ready notes for the transcript tests. The transcription pipeline is built elsewhere, so these
// append its events (NoteCreated, NoteUploadReceived, NoteTranscribed, NoteReady) straight to the
// event store, as the pipeline will, and wait for the read models.
import { randomUUID } from 'node:crypto'
import type { NoteCreated } from '../../domain/notes/note.ts'
import type { Transcript, TranscriptSegment } from '../../domain/notes/transcript.ts'
import type { SourceMetadata } from '../../domain/speakers/sourceKey.ts'
import type { TestService } from './service.ts'

export type SegmentSpec = [speakerLabel: string | null, startMs: number, endMs: number, text: string]

export function transcriptOf(specs: SegmentSpec[], o: { language?: string | null; words?: boolean } = {}): Transcript {
  const segments: TranscriptSegment[] = specs.map(([speakerLabel, startMs, endMs, text], sequence) => ({
    id: randomUUID(),
    sequence,
    startMs,
    endMs,
    speakerLabel,
    text,
    confidence: 0.9,
    locale: o.language ?? null,
    words: null,
  }))
  const last = specs[specs.length - 1]
  return {
    language: o.language === undefined ? 'es' : o.language,
    languagesDetected: o.language === null ? [] : [o.language ?? 'es'],
    durationSeconds: last ? Math.ceil(last[2] / 1000) : null,
    engine: 'test',
    provider: 'published',
    model: null,
    segments,
  }
}

export interface ReadyNoteOptions {
  noteId?: string
  title?: string
  provider?: NoteCreated['data']['provider']
  origin?: NoteCreated['data']['origin']
  sourceUrl?: string | null
  transcript: Transcript
  metadata?: SourceMetadata
  /** A stored audio blob for the note (voice tests). */
  audioBlobKey?: string
  /** Stop before NoteReady (a note still processing, but transcribed). */
  ready?: boolean
}

/** Appends a transcribed (and by default ready) note and waits until every read model has it. */
export async function readyNote(s: TestService, accountId: string, o: ReadyNoteOptions): Promise<string> {
  const noteId = o.noteId ?? randomUUID()
  const at = new Date().toISOString()
  const events: { id: string; type: string; data: Record<string, unknown> }[] = [
    {
      id: randomUUID(),
      type: 'NoteCreated',
      data: {
        noteId,
        accountId,
        sourceType: o.sourceUrl ? 'url' : 'upload',
        origin: o.origin ?? (o.sourceUrl ? 'podcast' : 'audio'),
        provider: o.provider ?? (o.sourceUrl ? 'podcast-rss' : null),
        sourceUrl: o.sourceUrl ?? null,
        title: o.title ?? 'Test note',
        language: null,
        keepAudio: false,
        upload: o.sourceUrl ? null : { filename: 'talk.wav', contentType: 'audio/wav', declaredBytes: null },
        jobId: null,
        reservationId: null,
        at,
      } satisfies NoteCreated['data'],
    },
  ]
  if (o.audioBlobKey) {
    events.push({ id: randomUUID(), type: 'NoteUploadReceived', data: { blobKey: o.audioBlobKey, sizeBytes: 1, contentType: 'audio/wav', sha256: 'x', durationSeconds: o.transcript.durationSeconds ?? 1, at } })
  }
  if (o.metadata) events.push({ id: randomUUID(), type: 'NoteSourceMetadataRecorded', data: { metadata: o.metadata as Record<string, unknown>, at } })
  events.push({ id: randomUUID(), type: 'NoteTranscribed', data: { transcript: o.transcript as unknown as Record<string, unknown>, at } })
  if (o.ready !== false) events.push({ id: randomUUID(), type: 'NoteReady', data: { durationSeconds: o.transcript.durationSeconds, language: o.transcript.language, at } })
  const r = await s.services.events.appendToStream(`note-${noteId}`, events, { expectedRevision: 'no_stream' })
  for (const p of ['notes', 'speakers', 'translations']) await s.services.sync.waitFor(p, r.lastGlobalPosition)
  return noteId
}

/** Polls `check` until it returns a value (not undefined), up to `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await check()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}
