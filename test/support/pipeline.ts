// Shared pieces of the pipeline's end-to-end tests: real speech made with espeak-ng, an
// OpenAI-compatible transcription server that answers from the audio it is sent (speech
// intervals measured with ffmpeg's silencedetect, scripted words), and polling helpers.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { formOf, startOpenAiServer, verboseJson, type RecordedRequest } from './openaiServer.ts'
import { speech, speechIntervals, type Utterance } from './speech.ts'
import type { TestService } from './service.ts'
import { TRANSCRIPTS, type TranscriptDoc } from '../../projections/notes.ts'
import { auditLedger } from '../../domain/credits/audit.ts'
import { creditsStream, type CreditEvent } from '../../domain/credits/ledger.ts'
import { creditAccount, ledgerEntries } from '../../readmodels/ledger.ts'

export const DIALOGUE: (Utterance & { speaker: string })[] = [
  { text: 'Good morning and welcome to the weekly planning meeting.', voice: 'en+m3', speaker: 'spk_0' },
  { text: 'Thank you. The budget review is finished.', voice: 'en+f3', speaker: 'spk_1' },
  { text: 'Great, then we can ship on Friday.', voice: 'en+m3', speaker: 'spk_0' },
]

export const dialogue = (dir: string, name = 'dialogue', format: 'mp3' | 'wav' | 'm4a' = 'mp3') => speech(dir, name, DIALOGUE, { format })

/** Transcription requests the ASR server received, with the form fields that matter. */
export interface AsrCall {
  language: string | null
  model: string | null
  filename: string
  bytes: number
  durationMs: number
}

/**
 * An OpenAI-compatible `/v1/audio/transcriptions`: measures the speech intervals of the uploaded
 * audio and answers one segment per interval, with the next scripted text and speaker.
 */
export async function startAsrServer(dir: string, script: { text: string; speaker?: string }[] = DIALOGUE) {
  const calls: AsrCall[] = []
  let failuresLeft = 0
  let hold: Promise<void> | null = null
  let onRequest: () => void = () => {}
  let next = 0
  const server = await startOpenAiServer(async (req: RecordedRequest) => {
    if (req.path !== '/v1/audio/transcriptions') return { status: 404, json: { error: { message: 'no such path' } } }
    onRequest()
    if (hold) await hold
    if (failuresLeft > 0) {
      failuresLeft--
      return { status: 503, json: { error: { message: 'overloaded, try again' } } }
    }
    const form = await formOf(req)
    const file = form.get('file') as File
    const path = join(dir, `asr-${randomUUID()}-${file.name}`)
    await writeFile(path, Buffer.from(await file.arrayBuffer()))
    const intervals = await speechIntervals(path)
    const total = intervals.length ? intervals[intervals.length - 1]!.endMs : 0
    calls.push({ language: (form.get('language') as string | null) ?? null, model: form.get('model') as string | null, filename: file.name, bytes: file.size, durationMs: total })
    const segments = intervals.map((iv) => {
      const line = script[next++ % script.length]!
      return { start: iv.startMs / 1000, end: iv.endMs / 1000, text: line.text, ...(line.speaker ? { speaker: line.speaker } : {}) }
    })
    return { json: verboseJson({ duration: total / 1000, segments, language: 'english' }) }
  })
  return {
    baseUrl: server.baseUrl,
    calls,
    /** The next `n` requests answer 503. */
    failNext(n: number) {
      failuresLeft = n
    },
    /** Requests wait until the returned function is called; `seen` resolves at the first one. */
    holdRequests() {
      let release!: () => void
      hold = new Promise<void>((r) => (release = r))
      const seen = new Promise<void>((r) => (onRequest = r))
      return {
        seen,
        release: () => {
          hold = null
          onRequest = () => {}
          release()
        },
      }
    },
    resetScript() {
      next = 0
    },
    close: server.close,
  }
}

export const json = { 'content-type': 'application/json' }

export async function createImport(s: TestService, headers: Record<string, string>, body: Record<string, unknown>): Promise<string> {
  const r = await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...headers, ...json }, payload: JSON.stringify(body) })
  if (r.statusCode !== 202) throw new Error(`create answered ${r.statusCode}: ${r.body}`)
  return r.json().noteId as string
}

/** Polls GET /v1/notes/{id} until the note is no longer processing; returns the last body and every progress seen. */
export async function waitForNote(s: TestService, headers: Record<string, string>, noteId: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  const progress: unknown[] = []
  for (;;) {
    const r = await s.inject({ method: 'GET', url: `/v1/notes/${noteId}`, headers })
    const body = r.json()
    if (body.progress) progress.push(body.progress)
    if (body.status === 'failed') await settledOf(s, noteId)
    if (body.status !== 'processing') return { note: body, progress }
    if (Date.now() > deadline) throw new Error(`note ${noteId} still processing after ${timeoutMs} ms: ${JSON.stringify(body.progress)}`)
    await new Promise((r) => setTimeout(r, 40))
  }
}

/**
 * A failed note's credits and minutes go back right after the failure is recorded, and the
 * settlement is recorded last: wait for that record before looking at ledgers.
 */
async function settledOf(s: TestService, noteId: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs
  while ((await s.services.events.readStream(`note-${noteId}`)).events.every((e) => e.type !== 'TranscriptionSettled')) {
    if (Date.now() > deadline) throw new Error(`note ${noteId} failed but was not settled within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

export const transcriptOf = (s: TestService, noteId: string) => s.docs.collection<TranscriptDoc>(TRANSCRIPTS).findOne({ _id: noteId })

/** The auditor's replay of an account's ledger against the read model (what `npm run audit-ledger` prints). */
export async function audit(s: TestService, accountId: string) {
  const read = await s.services.events.readStream(creditsStream.of(accountId))
  await s.services.sync.waitFor('credit-ledger', read.events[read.events.length - 1]!.globalPosition)
  return {
    events: read.events.map((e) => ({ type: e.type, data: e.data as Record<string, unknown> })),
    result: auditLedger(
      read.events.map((e) => ({ id: e.id, revision: e.revision, event: { type: e.type, data: e.data } as CreditEvent })),
      { lines: await ledgerEntries(s.docs, accountId), balance: (await creditAccount(s.docs, accountId))?.balance ?? null },
      undefined,
      { accountId },
    ),
  }
}
