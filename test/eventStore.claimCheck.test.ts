// Events that fit (issue 13, finding 2): a 6-hour transcript with word timings is several MB,
// over EventStoreDB's 1 MiB append limit (modelled by the protocol test server). Through the
// claim check the payload goes to the blob store and the event carries its hash and key; reads,
// subscriptions and a rebuild give back the payload exactly.
import t from 'tap'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { openEsdbEventStore } from '../adapters/esdb/eventStore.ts'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { LocalBlobStore } from '../adapters/local/blobStore.ts'
import { withClaimCheck, CLAIM_CHECK_THRESHOLD_BYTES } from '../adapters/claimCheck/eventStore.ts'
import { rebuildProjection, startProjection, type Projection } from '../projections/runner.ts'
import { startEsdbTestServer } from './support/esdbTestServer.ts'
import { tempDir } from './support/tmp.ts'

/** Six hours of speech at 2.5 words a second, in 10-second segments, every word timed. */
function sixHourTranscript() {
  const segments = []
  for (let s = 0; s < 6 * 3600; s += 10) {
    const words = Array.from({ length: 25 }, (_, i) => ({ word: `word${(s + i) % 997}`, start: s + i * 0.4, end: s + i * 0.4 + 0.35, probability: 0.9 }))
    segments.push({ start: s, end: s + 10, speaker: `SPEAKER_${(s / 10) % 3}`, text: words.map((w) => w.word).join(' '), words })
  }
  return { language: 'en', durationSeconds: 6 * 3600, segments }
}

/** Keeps each transcript whole: the read model to compare after a rebuild. */
const transcripts: Projection = {
  name: 'transcripts-test',
  filter: { eventTypes: ['NoteTranscribed'] },
  collections: ['transcripts-test'],
  async handle(events, docs) {
    for (const e of events) await docs.collection('transcripts-test').replaceOne({ _id: e.streamName }, { _id: e.streamName, transcript: e.data.transcript, words: (e.data.transcript as { segments: { words: unknown[] }[] }).segments.reduce((n, s) => n + s.words.length, 0) }, { upsert: true })
  },
}

t.test('given a 6-hour transcript with word timings, when it is appended to EventStoreDB, then the claim check makes it fit and reads give it back', async (t) => {
  const server = await startEsdbTestServer()
  const tmp = tempDir()
  const raw = openEsdbEventStore(server.connectionString)
  const blobs = new LocalBlobStore({ dir: join(tmp.dir, 'blobs'), publicBaseUrl: 'http://127.0.0.1:1', signingSecret: 'x'.repeat(32) })
  const events = withClaimCheck(raw, blobs)
  const docs = openEmbeddedDocumentStore({ path: join(tmp.dir, 'rm.db') })
  t.teardown(async () => {
    await raw.close()
    await server.stop()
    await docs.close()
    tmp.remove()
  })
  const transcript = sixHourTranscript()
  const data = { transcript, at: '2026-11-26T06:00:00.000Z' }
  const bytes = Buffer.byteLength(JSON.stringify(data))
  t.ok(bytes > 1024 * 1024, `the payload is ${(bytes / 1024 / 1024).toFixed(1)} MiB`)

  await t.rejects(raw.appendToStream(`note-${randomUUID()}`, [{ id: randomUUID(), type: 'NoteTranscribed', data }]), /Maximum Append Size|larger than max/, 'without the claim check EventStoreDB refuses it (over 4 MiB gRPC refuses the message before the 1 MiB append check)')

  const stream = `note-${randomUUID()}`
  await events.appendToStream(stream, [{ id: randomUUID(), type: 'NoteCreated', data: { at: data.at } }, { id: randomUUID(), type: 'NoteTranscribed', data }])
  const stored = (await raw.readStream(stream)).events[1]!
  t.ok(Buffer.byteLength(JSON.stringify(stored.data)) < CLAIM_CHECK_THRESHOLD_BYTES, 'the stored event is small')
  t.match(stored.data, { claimCheck: { sha256: /^[0-9a-f]{64}$/, key: /^claims\//, bytes } }, 'it holds the content hash and the reference')

  const read = (await events.readStream(stream)).events[1]!
  t.same(read.data, data, 'readStream gives the payload back')
  t.same((await events.readAll({ filter: { eventTypes: ['NoteTranscribed'] } }))[0]!.data, data, 'readAll too')

  const p = startProjection(transcripts, { events, docs })
  await p.waitFor(read.globalPosition, 30_000)
  await p.stop()
  const live = await docs.collection('transcripts-test').find({})
  t.equal(live.length, 1)
  t.same(live[0]!.transcript, transcript, 'the subscription applied the whole transcript')
  t.equal(live[0]!.words, 2160 * 25)

  await rebuildProjection(transcripts, { events, docs })
  t.same(await docs.collection('transcripts-test').find({}), live, 'a rebuild reproduces the read model exactly')
})

t.test('a payload under the threshold stays in the event', async (t) => {
  const server = await startEsdbTestServer()
  const tmp = tempDir()
  const raw = openEsdbEventStore(server.connectionString)
  const blobs = new LocalBlobStore({ dir: join(tmp.dir, 'blobs'), publicBaseUrl: 'http://127.0.0.1:1', signingSecret: 'x'.repeat(32) })
  const events = withClaimCheck(raw, blobs)
  t.teardown(async () => (await raw.close(), await server.stop(), tmp.remove()))
  await events.appendToStream('note-small', [{ id: randomUUID(), type: 'NoteEdited', data: { title: 'hi' } }])
  t.same((await raw.readStream('note-small')).events[0]!.data, { title: 'hi' })
})
