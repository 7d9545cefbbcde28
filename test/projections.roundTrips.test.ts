// Round trips per created note: on a remote read-model store (MongoDB) every read and write of a
// projection is one, and the projections process applies every `POST /v1/notes` in each
// projection that follows notes (the scale benchmark's sustained rate is that process's rate).
// A create is an insert-if-absent whatever is stored, so the projections that only insert on it
// read nothing first, and a run of creates in a batch is one insertManyIfAbsent per collection
// (projections/bulkCreates.ts). Before: notes, speakers and transcription jobs read the document
// once per create, and notes, speakers, the segment index and translations wrote once per
// create (100 creates: 300 reads and 400 writes; now 0 reads and 4 writes).
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { notesProjection, NOTES } from '../projections/notes.ts'
import { speakersProjection, SPEAKERS } from '../projections/speakers.ts'
import { transcriptionJobsProjection, TRANSCRIPTION_JOBS } from '../projections/transcriptionJobs.ts'
import { segmentIndexProjection } from '../projections/segmentIndex.ts'
import { CREDIT_ACCOUNTS, LEDGER_ENTRIES, ledgerProjection } from '../projections/ledger.ts'
import { translationsProjection } from '../projections/translations.ts'
import { noteStream } from '../domain/notes/note.ts'
import type { DocumentStore } from '../ports/documentStore.ts'
import type { RecordedEvent } from '../ports/eventStore.ts'
import type { Projection } from '../projections/runner.ts'
import { countingCalls } from '../projections/countingCalls.ts'

const at = '2026-01-01T00:00:00.000Z'
let position = 0
const recorded = (noteId: string, revision: number, type: string, data: Record<string, unknown>): RecordedEvent =>
  ({ id: randomUUID(), streamName: noteStream.of(noteId), revision, globalPosition: position++, type, data, metadata: { accountId: 'a1' }, created: new Date(at) }) as unknown as RecordedEvent
const created = (noteId: string, title: string, jobId: string | null = null) =>
  recorded(noteId, 0, 'NoteCreated', {
    noteId, accountId: 'a1', sourceType: jobId ? 'url' : 'upload', origin: 'audio', provider: null, sourceUrl: jobId ? 'https://example.com/a.mp3' : null, title, language: null, keepAudio: false,
    upload: jobId ? null : { filename: 'a.wav', contentType: 'audio/wav', declaredBytes: null }, jobId, reservationId: null, at,
  })

const READS = ['findOne', 'find', 'countDocuments']
/** `docs`, counting the reads and the writes (one round trip each on MongoDB) made through it. */
function countingReads(docs: DocumentStore): { store: DocumentStore; reads: () => number; writes: () => number } {
  let reads = 0
  let writes = 0
  const store = countingCalls(docs, (_collection, method) => (READS.includes(method) ? reads++ : writes++))
  return { store, reads: () => reads, writes: () => writes }
}

/** A fresh in-memory read-model store with `projection` set up and `given` applied, closed at teardown. */
async function storeWith(t: Test, projection: Projection, given: RecordedEvent[] = []): Promise<DocumentStore> {
  const docs = openEmbeddedDocumentStore({ path: ':memory:' })
  t.teardown(() => docs.close())
  await projection.setup?.(docs)
  if (given.length > 0) await projection.handle(given, docs)
  return docs
}

const cases: [Projection, string][] = [
  [notesProjection, NOTES],
  [speakersProjection, SPEAKERS],
  [segmentIndexProjection, 'segment_index_owners'],
  [translationsProjection, '_translation_owners'],
]

for (const [projection, collection] of cases) {
  t.test(`${projection.name}: given 100 note creates, when applied, then 100 documents in one write and no read; applied again, nothing changes`, async (t) => {
    const docs = await storeWith(t, projection)
    const creates = Array.from({ length: 100 }, (_, i) => created(randomUUID(), `Note ${i}`))
    const counted = countingReads(docs)
    await projection.handle(creates, counted.store)
    t.equal(counted.reads(), 0, 'no read per create')
    t.equal(counted.writes(), 1, 'one write for the 100 creates')
    const first = await docs.collection(collection).find({}, { sort: { _id: 1 } })
    t.equal(first.length, 100)
    t.match(first[0], { accountId: 'a1' })
    await projection.handle(creates, docs)
    t.same(await docs.collection(collection).find({}, { sort: { _id: 1 } }), first, 're-applied creates change nothing')
  })
}

t.test('notes: given creates, edits and a delete interleaved in one batch, then the read model is exactly that of applying them one at a time', async (t) => {
  const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()]
  const events = [
    created(a, 'A'),
    created(b, 'B'),
    recorded(a, 1, 'NoteEdited', { title: 'A2', at }),
    created(c, 'C'),
    recorded(b, 1, 'NoteDeleted', { at }),
    recorded(c, 1, 'NoteEdited', { title: 'C2', at }),
    recorded(c, 2, 'NoteEdited', { title: 'C3', at }),
  ]
  const read = async (handle: (docs: DocumentStore) => Promise<void>) => {
    const docs = await storeWith(t, notesProjection)
    await handle(docs)
    return docs.collection(NOTES).find({}, { sort: { _id: 1 } })
  }
  const together = await read((docs) => notesProjection.handle(events, docs))
  const oneByOne = await read(async (docs) => {
    for (const e of events) await notesProjection.handle([e], docs)
  })
  t.same(together, oneByOne)
  t.same(together.map((n) => n.title).sort(), ['A2', 'C3'])
})

t.test('notes: given a note edited since, when its create is applied again (a restart after a crash), then the note keeps its edit', async (t) => {
  const docs = await storeWith(t, notesProjection)
  const noteId = randomUUID()
  const create = created(noteId, 'First')
  await notesProjection.handle([create, recorded(noteId, 1, 'NoteEdited', { title: 'Second', at })], docs)
  await notesProjection.handle([create], docs)
  const note = await docs.collection(NOTES).findOne({ _id: noteId })
  t.equal(note?.title, 'Second')
  t.equal(note?.revision, 1)
})

t.test('transcription jobs: given upload creates, then no read and no job; given an import create, then its job is queued', async (t) => {
  const docs = await storeWith(t, transcriptionJobsProjection)
  const counted = countingReads(docs)
  await transcriptionJobsProjection.handle(Array.from({ length: 50 }, (_, i) => created(randomUUID(), `Upload ${i}`)), counted.store)
  t.equal(counted.reads(), 0, 'an upload has no job until it is finalized: nothing to read')
  t.equal((await docs.collection(TRANSCRIPTION_JOBS).find({})).length, 0)
  const noteId = randomUUID()
  const jobId = randomUUID()
  await transcriptionJobsProjection.handle([created(noteId, 'Import', jobId)], docs)
  t.match(await docs.collection(TRANSCRIPTION_JOBS).findOne({ _id: noteId }), { jobId, status: 'queued', revision: 0 })
})

// Edits (issue 31): before, each projection that follows notes read and wrote each note once per
// event (100 edits of 50 notes: notes and speakers 100 reads and 100 writes each, transcription
// jobs 100 reads); now a batch is one read of the notes it touches and one write of those it
// changed, and events a projection ignores are dropped before anything is read.
const editCases: [Projection, string][] = [
  [notesProjection, NOTES],
  [speakersProjection, SPEAKERS],
]
for (const [projection, collection] of editCases) {
  t.test(`${projection.name}: given 50 notes, when a batch of 100 edits is applied, then one read and one write, and the read model is that of applying them one at a time`, async (t) => {
    const ids = Array.from({ length: 50 }, () => randomUUID())
    const creates = ids.map((id, i) => created(id, `Note ${i}`))
    const edits = [1, 2].flatMap((revision) => ids.map((id) => recorded(id, revision, 'NoteEdited', { title: `${id} v${revision}`, at })))
    const fresh = () => storeWith(t, projection, creates)
    const docs = await fresh()
    const counted = countingReads(docs)
    await projection.handle(edits, counted.store)
    t.equal(counted.reads(), 1, 'one read for the whole batch')
    t.equal(counted.writes(), 1, 'one write for the whole batch')
    const together = await docs.collection(collection).find({}, { sort: { _id: 1 } })
    t.same(together.map((d) => d.title).sort(), ids.map((id) => `${id} v2`).sort())
    const oneByOne = await fresh()
    for (const e of edits) await projection.handle([e], oneByOne)
    t.same(together, await oneByOne.collection(collection).find({}, { sort: { _id: 1 } }))
  })

  t.test(`${projection.name}: given a note stored with its create already (a restart before the checkpoint), when its create and an edit are applied again in one batch, then the edit lands`, async (t) => {
    const docs = await storeWith(t, projection)
    const noteId = randomUUID()
    const create = created(noteId, 'First')
    await projection.handle([create], docs)
    await projection.handle([create, recorded(noteId, 1, 'NoteEdited', { title: 'Second', at })], docs)
    t.match(await docs.collection(collection).findOne({ _id: noteId }), { title: 'Second', revision: 1 })
  })
}

// The job queue follows each import through its lifecycle (issue 31: the mixed benchmark's
// imports): before, every lifecycle event read its job and wrote it (4 events of 20 jobs: 80
// reads, 80 writes); now one read and one write per batch.
t.test('transcription jobs: given 20 queued imports, when a batch of their lifecycle events is applied, then one read and one write, and the queue is that of applying them one at a time', async (t) => {
  const ids = Array.from({ length: 20 }, () => randomUUID())
  const creates = ids.map((id, i) => created(id, `Import ${i}`, `job-${i}`))
  const fresh = () => storeWith(t, transcriptionJobsProjection, creates)
  const later = '2026-01-01T00:05:00.000Z'
  const lifecycle = ids.flatMap((id, i) => [
    recorded(id, 1, 'TranscriptionStarted', { attempt: 1, retryAt: later, at }),
    recorded(id, 2, 'TranscriptionProgressed', { stage: 'transcribing', percent: 50, attempt: 1, retryAt: later, at }),
    i % 2 === 0 ? recorded(id, 3, 'NoteReady', { at }) : recorded(id, 3, 'TranscriptionAttemptFailed', { attempt: 1, errorCode: 'engine_unavailable', retryAt: later, at }),
  ])
  const docs = await fresh()
  const counted = countingReads(docs)
  await transcriptionJobsProjection.handle(lifecycle, counted.store)
  t.equal(counted.reads(), 1, 'one read for the whole batch')
  t.equal(counted.writes(), 1, 'one write for the whole batch')
  const together = await docs.collection(TRANSCRIPTION_JOBS).find({}, { sort: { _id: 1 } })
  t.equal(together.length, 10, 'the ready ones left the queue')
  t.ok(together.every((j) => j.status === 'queued' && j.attempt === 1 && j.dueAt === later && j.revision === 3), 'the failed ones wait for their retry')
  const oneByOne = await fresh()
  for (const e of lifecycle) await transcriptionJobsProjection.handle([e], oneByOne)
  t.same(together, await oneByOne.collection(TRANSCRIPTION_JOBS).find({}, { sort: { _id: 1 } }))
  // Applied again (a restart before the checkpoint): nothing changes, and a finished job stays gone.
  await transcriptionJobsProjection.handle(lifecycle, docs)
  t.same(await docs.collection(TRANSCRIPTION_JOBS).find({}, { sort: { _id: 1 } }), together)
})

// The credit ledger (issue 31: every create and import moves credits): before, each event read
// its account, wrote its entry and wrote the summary (100 events: 100 reads, 200 writes); now a
// batch is one read of its accounts, one write of its entries, then one of their summaries.
t.test('credit ledger: given 10 open accounts, when a batch of 100 charges and refunds is applied, then one read and two writes, the same ledger as one at a time, and nothing changes when applied again', async (t) => {
  const accounts = Array.from({ length: 10 }, (_, i) => `acct-${i}`)
  const credit = (accountId: string, revision: number, type: string, data: Record<string, unknown>): RecordedEvent =>
    ({ id: randomUUID(), streamName: `credits-${accountId}`, revision, globalPosition: position++, type, data: { at, ...data }, metadata: { accountId }, created: new Date(at) }) as unknown as RecordedEvent
  const opened = accounts.flatMap((a) => [credit(a, 0, 'CreditAccountOpened', { accountId: a, plan: 'power' }), credit(a, 1, 'CreditCycleStarted', { cycle: '2026-01', plan: 'power', granted: 1000, expired: 0, balanceAfter: 1000 })])
  const moves = accounts.flatMap((a) =>
    Array.from({ length: 10 }, (_, k) => {
      const balanceBefore = 1000 - 5 * Math.ceil(k / 2)
      return k % 2 === 0
        ? credit(a, 2 + k, 'CreditsCharged', { chargeId: `${a}-c${k}`, operation: 'ask', cost: 10, noteId: null, requestId: null, balanceAfter: balanceBefore - 10 })
        : credit(a, 2 + k, 'CreditsRefunded', { chargeId: `${a}-c${k - 1}`, amount: 5, reason: 'test', balanceAfter: balanceBefore - 5 })
    }),
  )
  const fresh = () => storeWith(t, ledgerProjection, opened)
  const docs = await fresh()
  const counted = countingReads(docs)
  await ledgerProjection.handle(moves, counted.store)
  t.equal(counted.reads(), 1, 'one read of the 10 accounts')
  t.equal(counted.writes(), 2, 'one write of the 100 entries, one of the 10 summaries')
  const state = async (d: DocumentStore) => ({ accounts: await d.collection(CREDIT_ACCOUNTS).find({}, { sort: { _id: 1 } }), entries: await d.collection(LEDGER_ENTRIES).find({}, { sort: { _id: 1 } }) })
  const together = await state(docs)
  t.equal(together.entries.length, 110, 'every balance-changing event is a line (an account opening is bookkeeping)')
  const oneByOne = await fresh()
  for (const e of moves) await ledgerProjection.handle([e], oneByOne)
  t.same(together, await state(oneByOne))
  await ledgerProjection.handle([...opened, ...moves], docs)
  t.same(await state(docs), together, 're-applied (a restart before the checkpoint): nothing changes')
})

t.test('transcription jobs and speakers: given note events they ignore, when applied, then nothing is read', async (t) => {
  const docs = openEmbeddedDocumentStore({ path: ':memory:' })
  t.teardown(() => docs.close())
  const noteId = randomUUID()
  const ignoredByJobs = [recorded(noteId, 1, 'NoteEdited', { title: 'T', at }), recorded(noteId, 2, 'NoteUploadReceived', { durationSeconds: 3, at }), recorded(noteId, 3, 'NoteAudioStored', { at })]
  const ignoredBySpeakers = [recorded(noteId, 2, 'NoteUploadReceived', { durationSeconds: 3, at }), recorded(noteId, 3, 'NoteAudioStored', { at }), recorded(noteId, 4, 'TranscriptionProgressed', { stage: 'transcribing', percent: 50, attempt: 1, retryAt: at, at })]
  for (const [projection, events] of [[transcriptionJobsProjection, ignoredByJobs], [speakersProjection, ignoredBySpeakers]] as const) {
    await projection.setup?.(docs)
    const counted = countingReads(docs)
    await projection.handle([...events], counted.store)
    t.equal(counted.reads(), 0, `${projection.name} reads nothing`)
    t.equal(counted.writes(), 0, `${projection.name} writes nothing`)
  }
})
