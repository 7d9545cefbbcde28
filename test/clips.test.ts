// Audio clips: MCP extract_clip and its REST twin GET /v1/notes/{id}/clip cut a real MP3 with
// ffmpeg from the note's audio, charge 5 credits through the same command (the same ledger
// entries), refund a cut that fails, and refuse what cannot be cut.
import t from 'tap'
import { Readable } from 'node:stream'
import { writeFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { mcpTestService, structured, toolErrorBody } from './support/mcp.ts'
import { readyNote, transcriptOf } from './support/transcripts.ts'
import { ledgerShape, moves } from './support/ledger.ts'
import { wavBytes } from './support/media.ts'
import { ffprobeMediaProbe } from '../adapters/ffprobe/mediaProbe.ts'

t.test('extract_clip and GET /v1/notes/{id}/clip', async (t) => {
  const s = await mcpTestService()
  t.teardown(s.close)
  const transcript = transcriptOf([['A', 0, 20_000, 'Twenty seconds of a tone.']])
  transcript.durationSeconds = 20

  async function noteWithAudio(accountId: string) {
    const key = `uploads/clip-${Math.random().toString(36).slice(2)}`
    await s.services.blobs.put(key, Readable.from(wavBytes(20)), { contentType: 'audio/wav', maxBytes: 10_000_000 })
    return readyNote(s, accountId, { transcript, audioBlobKey: key })
  }
  const durationOf = async (bytes: Buffer) => {
    const dir = await mkdtemp(join(tmpdir(), 'clip-test-'))
    try {
      await writeFile(join(dir, 'c.mp3'), bytes)
      return await ffprobeMediaProbe().probe(join(dir, 'c.mp3'))
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }

  const viaMcp = await s.account('free')
  const viaRest = await s.account('pro')
  const mcpNote = await noteWithAudio(viaMcp.accountId)
  const restNote = await noteWithAudio(viaRest.accountId)
  const client = await s.connect(s.mcpUrl, viaMcp.headers)

  t.test('given a ready note with audio, when a range is cut over MCP, then an MP3 of that range comes back and 5 credits are charged', async (t) => {
    const result = await client.callTool({ name: 'extract_clip', arguments: { noteId: mcpNote, startMs: 2000, endMs: 7000 } })
    t.same(structured(result), { noteId: mcpNote, startMs: 2000, endMs: 7000, durationMs: 5000, mimeType: 'audio/mpeg', sizeBytes: structured(result).sizeBytes })
    const audio = (result.content as { type: string; data?: string; mimeType?: string }[]).find((c) => c.type === 'audio')!
    t.equal(audio.mimeType, 'audio/mpeg')
    const bytes = Buffer.from(audio.data!, 'base64')
    t.equal(bytes.length, structured(result).sizeBytes)
    const info = await durationOf(bytes)
    t.equal(info?.audioCodec, 'mp3')
    t.ok(Math.abs(info!.durationSeconds - 5) < 0.2, `the clip lasts ${info?.durationSeconds} s`)
    const { charges } = await moves(s, viaMcp.accountId, 'clip')
    t.match(charges, [{ cost: 5, noteId: mcpNote }])
  })

  t.test('the REST twin answers the MP3 and leaves the same ledger entries', async (t) => {
    const r = await s.inject({ method: 'GET', url: `/v1/notes/${restNote}/clip?startMs=2000&endMs=7000`, headers: viaRest.headers })
    t.equal(r.statusCode, 200)
    t.equal(r.headers['content-type'], 'audio/mpeg')
    t.ok(Math.abs((await durationOf(r.rawPayload))!.durationSeconds - 5) < 0.2)
    const rest = (await ledgerShape(s, viaRest.accountId)).filter((e) => e.operation === 'clip')
    const mcp = (await ledgerShape(s, viaMcp.accountId)).filter((e) => e.operation === 'clip')
    t.same(rest.map(({ type, delta }) => ({ type, delta })), mcp.map(({ type, delta }) => ({ type, delta })))
  })

  t.test('ranges past the end are cut at the end; bad ranges and missing audio are refused without a charge', async (t) => {
    const late = structured(await client.callTool({ name: 'extract_clip', arguments: { noteId: mcpNote, startMs: 18_000, endMs: 60_000 } }))
    t.match(late, { startMs: 18_000, endMs: 20_000, durationMs: 2000 })
    const before = (await moves(s, viaMcp.accountId, 'clip')).charges.length
    for (const [args, code] of [
      [{ startMs: 5000, endMs: 5000 }, 'invalid_request'],
      [{ startMs: 25_000, endMs: 26_000 }, 'invalid_request'],
    ] as const) {
      t.equal(toolErrorBody(await client.callTool({ name: 'extract_clip', arguments: { noteId: mcpNote, ...args } })).error, code)
    }
    const long = transcriptOf([['A', 0, 600_000, 'Ten minutes.']])
    long.durationSeconds = 600
    const tenMinutes = await readyNote(s, viaMcp.accountId, { transcript: long, audioBlobKey: 'uploads/ten-minutes' })
    const tooLong = toolErrorBody(await client.callTool({ name: 'extract_clip', arguments: { noteId: tenMinutes, startMs: 0, endMs: 5 * 60_000 + 1 } }))
    t.match(tooLong, { error: 'invalid_request', message: /at most 300 s/ })
    const noAudio = await readyNote(s, viaMcp.accountId, { transcript, sourceUrl: 'https://feeds.example.org/show.rss' })
    t.equal(toolErrorBody(await client.callTool({ name: 'extract_clip', arguments: { noteId: noAudio, startMs: 0, endMs: 1000 } })).error, 'audio_unavailable')
    const other = await s.account('pro')
    const theirs = await noteWithAudio(other.accountId)
    t.equal(toolErrorBody(await client.callTool({ name: 'extract_clip', arguments: { noteId: theirs, startMs: 0, endMs: 1000 } })).error, 'not_found')
    t.equal((await moves(s, viaMcp.accountId, 'clip')).charges.length, before, 'no refused clip was charged')
  })

  t.test('a cut that fails is refunded by an event', async (t) => {
    const broken = await readyNote(s, viaMcp.accountId, { transcript, audioBlobKey: 'uploads/never-stored' })
    const r = await client.callTool({ name: 'extract_clip', arguments: { noteId: broken, startMs: 0, endMs: 1000 } })
    t.equal(r.isError, true)
    const { charges, refunds } = await moves(s, viaMcp.accountId, 'clip')
    const charge = charges.find((c) => c.noteId === broken)!
    t.ok(charge)
    t.match(refunds, [{ chargeId: charge.chargeId, amount: 5 }])
  })
})
