// An upload through the whole pipeline on the local engines only (Whisper tiny.en, the local
// diarizer: Silero VAD, segmentation-3.0 and CAM++ from .ci/models), black-box over the REST API:
// two voices come back as two speakers, the first word starts after the lead silence, and what
// builds on speakers works on it: the roster, renaming, name suggestions and a voice profile
// (GE2E) enrolled from the renamed speaker.
import t from 'tap'
import { existsSync, readFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { join, resolve } from 'node:path'
import { randomUUID } from 'node:crypto'
import { testService } from './support/service.ts'
import { tempDir } from './support/tmp.ts'
import { speakerModel } from './support/speech.ts'
import { eventually } from './support/transcripts.ts'
import { transcriptOf, waitForNote, json } from './support/pipeline.ts'
import { fetchTinyModel } from '../scripts/whisperModel.ts'
import { ffmpegPath } from '../adapters/ffmpeg/mediaTool.ts'

const TINY = join(process.cwd(), '.ci', 'models', 'ggml-tiny.en.bin')

t.test('an upload of two voices is ready with two speakers, and speakers, names and voice profiles work on it', async (t) => {
  if (!existsSync(TINY)) fetchTinyModel(TINY)
  const tmp = tempDir('pipeline-diar-')
  t.teardown(tmp.remove)
  const parts = [
    ['en+m3', 'Good morning, my name is Peter, thanks for joining the weekly planning meeting today.'],
    ['en+f3', 'Thank you Peter. I finished the budget review yesterday and the numbers look good.'],
  ].map(([voice, text], i) => {
    const p = join(tmp.dir, `${i}.wav`)
    execFileSync('espeak-ng', ['-v', voice!, '-s', '160', '-w', p, text!])
    return p
  })
  const mp3 = join(tmp.dir, 'talk.mp3')
  // 1.5 s of silence first: the first word must not be stamped at 0 ms.
  execFileSync(ffmpegPath(), ['-v', 'error', '-y', '-i', parts[0]!, '-i', parts[1]!, '-filter_complex', '[0:a]adelay=1500,apad=pad_len=11025[a0];[a0][1:a]concat=n=2:v=0:a=1', '-ac', '1', '-c:a', 'libmp3lame', '-b:a', '64k', mp3])
  const bytes = readFileSync(mp3)

  const s = await testService({
    workers: true,
    env: { ASR_ENGINE: 'whisper', WHISPER_MODEL_PATH: TINY, MODELS_DIR: resolve('.ci', 'models'), SPEAKER_EMBEDDING_MODEL: speakerModel(), JOB_POLL_MS: '20', JOB_LEASE_MS: '120000' },
  })
  t.teardown(s.close)
  const a = await s.account('pro')
  await s.services.voice.grantConsent({ accountId: a.accountId, plan: 'pro', keyId: null, requestId: randomUUID(), via: 'dashboard' })

  const created = await s.inject({ method: 'POST', url: '/v1/notes', headers: { ...a.headers, ...json }, payload: JSON.stringify({ filename: 'talk.mp3', contentType: 'audio/mpeg', fileSizeBytes: bytes.length }) })
  t.equal(created.statusCode, 202)
  const { noteId, upload } = created.json()
  const u = new URL(upload.url)
  t.equal((await s.inject({ method: 'PUT', url: u.pathname + u.search, headers: { 'content-type': 'audio/mpeg' }, payload: bytes })).statusCode, 200)
  t.equal((await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/finalize`, headers: { ...a.headers, ...json }, payload: '{}' })).statusCode, 202)
  const { note } = await waitForNote(s, a.headers, noteId, 300_000)
  t.match(note, { status: 'ready' })
  const detail = (await s.inject({ method: 'GET', url: `/v1/notes/${noteId}`, headers: a.headers })).json()
  t.equal(detail.transcript.speakerCount, 2, 'two speakers')
  const tr = (await transcriptOf(s, noteId))!
  t.same([...new Set(tr.segments.map((x) => x.speakerLabel))], ['A', 'B'], JSON.stringify(tr.segments.map((x) => [x.speakerLabel, x.startMs, x.text])))
  t.match(tr.segments[0]!.text, /Peter/)
  t.ok(tr.segments[0]!.startMs >= 1300 && (tr.segments[0]!.words?.[0]?.startMs ?? 1300) >= 1300, `the first word starts with the speech after the lead silence (${tr.segments[0]!.startMs} ms)`)

  const roster = (await s.inject({ method: 'GET', url: `/v1/notes/${noteId}/speakers`, headers: a.headers })).json()
  t.same(roster.speakers.map((x: { label: string }) => x.label), ['A', 'B'])
  t.ok(
    roster.speakers.every((x: { diarizationConfidence: number | null }) => typeof x.diarizationConfidence === 'number' && x.diarizationConfidence >= 0 && x.diarizationConfidence <= 1),
    `each speaker has the diarizer's confidence (extension): ${JSON.stringify(roster.speakers.map((x: { diarizationConfidence: number | null }) => x.diarizationConfidence))}`,
  )
  const suggested = await s.inject({ method: 'POST', url: `/v1/notes/${noteId}/speakers/suggest`, headers: a.headers })
  t.equal(suggested.statusCode, 200)
  t.ok(suggested.json().speakers.some((x: { suggestedName: string | null; name: string | null }) => (x.suggestedName ?? x.name) === 'Peter'), 'the self-introduction names speaker A')

  const renamed = await s.inject({ method: 'PATCH', url: `/v1/notes/${noteId}/speakers/B`, headers: { ...a.headers, ...json }, payload: JSON.stringify({ name: 'Maria' }) })
  t.equal(renamed.statusCode, 200)
  t.match(renamed.json().speakers.find((x: { label: string }) => x.label === 'B'), { name: 'Maria', nameStatus: 'confirmed' })
  const profile = await eventually(async () => {
    const p = (await s.inject({ method: 'GET', url: '/v1/voice-profiles', headers: a.headers })).json().profiles.find((x: { name: string }) => x.name === 'Maria')
    return p?.hasVoiceprint ? p : undefined
  }, 120_000)
  t.match(profile, { name: 'Maria', hasVoiceprint: true })
  t.ok(profile.voiceSeconds > 2, `the voiceprint is made from Maria's diarized speech (${profile.voiceSeconds} s)`)
})
