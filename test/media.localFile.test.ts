// Local file read through the media tools (issue 26, item 2). An MP3 that starts with an ID3
// header and then an HLS playlist naming a local file (followed by real, silent MP3 frames) was
// probed as MP3 and decoded as HLS by an older ffmpeg, which opened the local file: its speech
// became the transcript, by upload and by import. Now ffprobe and ffmpeg are one build, both open
// user media with the file protocol and the container demuxers only (no hls, concat, ...), and
// ffmpeg is forced to the probe's demuxer: the file is one second of silence, and that is all.
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ffmpegMediaTool, ffmpegPath } from '../adapters/ffmpeg/mediaTool.ts'
import { ffprobeMediaProbe } from '../adapters/ffprobe/mediaProbe.ts'
import { testService } from './support/service.ts'
import { tempDir } from './support/tmp.ts'
import { startHttpServer } from './support/httpServer.ts'
import { speech } from './support/speech.ts'
import { createImport, startAsrServer, waitForNote, transcriptOf } from './support/pipeline.ts'
import { uploadNote } from './support/upload.ts'

const tmp = tempDir('media-local-')
t.teardown(tmp.remove)
const secret = await speech(tmp.dir, 'secret', [{ text: 'The vault code is four four seven nine. Tell no one.', voice: 'en+m3' }], { format: 'wav' })
const silentFrames = join(tmp.dir, 'silence.mp3')
await promisify(execFile)(ffmpegPath(), ['-y', '-loglevel', 'error', '-f', 'lavfi', '-i', 'anullsrc=r=22050:cl=mono', '-t', '1', '-c:a', 'libmp3lame', '-b:a', '32k', '-write_xing', '0', '-id3v2_version', '0', silentFrames])
const playlist = `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:10.0,\n${secret}\n#EXT-X-ENDLIST\n`
// An ID3v2.4 header with an empty tag, then the playlist, then the MP3 frames.
const crafted = Buffer.concat([Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0]), Buffer.from(playlist), await readFile(silentFrames)])
const craftedPath = join(tmp.dir, 'crafted.mp3')
await writeFile(craftedPath, crafted)

t.test('the probe and the decoder read the crafted file as the MP3 it claims to be: one second, not the local file', async (t) => {
  const info = await ffprobeMediaProbe().probe(craftedPath)
  t.match(info, { formatName: 'mp3', hasAudio: true })
  const out = await ffmpegMediaTool().toSpeechWav(craftedPath, join(tmp.dir, 'crafted.wav'), { format: info!.formatName })
  t.ok(out.durationSeconds < 1.5, `decoded ${out.durationSeconds} s (the local file holds more than 3 s)`)
})

t.test('a playlist or a concat list is no media: the probe refuses it and the decoder will not open it', async (t) => {
  const m3u8 = join(tmp.dir, 'list.m3u8')
  await writeFile(m3u8, playlist)
  const concat = join(tmp.dir, 'list.txt')
  await writeFile(concat, `ffconcat version 1.0\nfile ${secret}\n`)
  for (const path of [m3u8, concat]) {
    t.equal(await ffprobeMediaProbe().probe(path), null, path)
    await t.rejects(ffmpegMediaTool().toSpeechWav(path, join(tmp.dir, 'list.wav')), /not on whitelist|Invalid/, path)
  }
  await t.rejects(ffmpegMediaTool().toSpeechWav(craftedPath, join(tmp.dir, 'x.wav'), { format: 'hls' }), /not read from user media/)
})

t.test('by import and by upload, the crafted file never transcribes the local file', async (t) => {
  const asr = await startAsrServer(tmp.dir)
  t.teardown(asr.close)
  const web = await startHttpServer({ '/episode.mp3': { body: crafted, headers: { 'content-type': 'audio/mpeg' } } })
  t.teardown(web.close)
  const s = await testService({ workers: true, env: { IMPORT_ALLOW_HOSTS: '127.0.0.1', ASR_BASE_URL: asr.baseUrl, JOB_POLL_MS: '20', JOB_BACKOFF_BASE_MS: '20' } })
  t.teardown(s.close)
  const a = await s.account('pro')
  const imported = await createImport(s, a.headers, { audioUrl: web.url('/episode.mp3') })
  const uploaded = await uploadNote(s, a.headers, crafted, 'episode.mp3')
  t.equal(uploaded.finalize.status, 202, 'the upload probes as a one-second MP3')
  for (const noteId of [imported, uploaded.noteId]) {
    const { note } = await waitForNote(s, a.headers, noteId)
    t.match(note, { status: 'failed', errorCode: 'no_speech' }, 'one second of silence holds no speech')
    t.equal(await transcriptOf(s, noteId), null)
  }
  t.equal(asr.calls.length, 0, 'the speech engine never heard the local file')
})
