// Ready notes for the language-feature tests. The pipeline is built elsewhere, so these append
// the note's events directly, in the shapes the pipeline records (NoteCreated, NoteTranscribed
// with a transcript, NoteReady), and wait for the read models.
import { randomUUID } from 'node:crypto'
import { noteStream, type NoteEvent } from '../../domain/notes/note.ts'
import type { TranscriptSegment } from '../../domain/notes/transcript.ts'
import type { TestService } from './service.ts'

export interface NoteSpec {
  title?: string
  language?: string | null
  /** [speaker letter, text] per segment, `gapMs` apart (default 9 s), or full segments. */
  lines?: [string, string][]
  segments?: Omit<TranscriptSegment, 'id' | 'sequence' | 'confidence' | 'locale' | 'words'>[]
  gapMs?: number
  durationSeconds?: number | null
  /** Stop after NoteCreated: a note still processing. */
  processing?: boolean
}

export async function appendNote(s: TestService, accountId: string, spec: NoteSpec = {}): Promise<{ noteId: string; segments: TranscriptSegment[] }> {
  const noteId = randomUUID()
  const gap = spec.gapMs ?? 9000
  const raw = spec.segments ?? (spec.lines ?? [['A', 'Hello, this is a short note.']]).map(([speakerLabel, text], i) => ({ startMs: i * gap, endMs: i * gap + gap - 500, speakerLabel, text }))
  const segments: TranscriptSegment[] = raw.map((r, i) => ({ id: randomUUID(), sequence: i, confidence: 0.9, locale: spec.language ?? null, words: null, ...r }))
  const at = new Date().toISOString()
  const lastEnd = segments.reduce((m, x) => Math.max(m, x.endMs), 0)
  const durationSeconds = spec.durationSeconds === undefined ? lastEnd / 1000 : spec.durationSeconds
  const events: NoteEvent[] = [
    {
      type: 'NoteCreated',
      data: {
        noteId,
        accountId,
        sourceType: 'upload',
        origin: 'audio',
        provider: null,
        sourceUrl: null,
        title: spec.title ?? 'Test note',
        language: spec.language ?? null,
        keepAudio: false,
        upload: null,
        jobId: null,
        reservationId: null,
        at,
      },
    },
  ]
  if (!spec.processing) {
    events.push(
      {
        type: 'NoteTranscribed',
        data: {
          transcript: { language: spec.language ?? null, languagesDetected: spec.language ? [spec.language] : [], durationSeconds, engine: 'test', provider: null, model: null, segments },
          at,
        },
      },
      { type: 'NoteReady', data: { durationSeconds, language: spec.language ?? null, at } },
    )
  }
  const r = await s.services.events.appendToStream(
    noteStream.of(noteId),
    events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data as Record<string, unknown>, metadata: { accountId } })),
    { expectedRevision: 'no_stream' },
  )
  await s.services.sync.waitFor('notes', r.lastGlobalPosition)
  await s.services.sync.waitFor('segment-index', r.lastGlobalPosition)
  return { noteId, segments }
}

/** `[mm:ss]` markers of a text, and `[Title | mm:ss]` ones split into title and time. */
export function quotedTimes(answer: string): { title: string | null; time: string }[] {
  return [...answer.matchAll(/\[(?:([^\]|]+?) \| )?(\d{2,}:\d{2})\]/g)].map((m) => ({ title: m[1] ?? null, time: m[2]! }))
}
