// EventStoreDB depth (issue 13, finding 6), deleted streams: an operator may soft-delete a stream
// (it reads as missing and can be written again, its revisions continuing) or hard-delete it (a
// tombstone: StreamDeleted on every read and write). The adapter maps both to a clear outcome: a
// deleted note reads as not found, and a write to a tombstoned stream is a typed error that the
// command handler answers `not_found`, never a crash or a 500. The test server models the
// documented semantics (see `handleDelete` in test/support/esdbTestServer.ts).
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { openEsdbEventStore } from '../adapters/esdb/eventStore.ts'
import { CommandHandler } from '../commands/handleCommand.ts'
import { DomainError } from '../domain/errors.ts'
import { noteDecider, noteStream, type NoteCommand } from '../domain/notes/note.ts'
import { StreamDeletedError, type EventStore } from '../ports/eventStore.ts'
import { openEventStore } from '../app/infrastructure.ts'
import { loadConfig } from '../app/config.ts'
import { startEsdbTestServer } from './support/esdbTestServer.ts'
import { tempDir } from './support/tmp.ts'
import { ticked } from './support/ticks.ts'

const now = '2026-11-26T08:00:00.000Z'
const create = (noteId: string): NoteCommand => ({
  type: 'CreateNote',
  noteId,
  accountId: 'acc',
  sourceType: 'upload',
  origin: 'audio',
  provider: null,
  sourceUrl: null,
  title: 'T',
  language: null,
  keepAudio: false,
  upload: null,
  jobId: null,
  reservationId: null,
  now,
})
const edit = (title: string): NoteCommand => ({ type: 'EditNote', accountId: 'acc', changes: { title }, now })

async function withServer(t: Test): Promise<EventStore> {
  const server = await startEsdbTestServer()
  const events = openEsdbEventStore(server.connectionString)
  t.teardown(async () => (await events.close(), await server.stop()))
  return events
}

t.test('given a soft-deleted stream, when it is read, then it is missing; when written again, its revisions continue', async (t) => {
  const events = await withServer(t)
  await events.appendToStream('tick-1', [ticked(0), ticked(1), ticked(2)])
  await events.deleteStream!('tick-1')
  t.same(await events.readStream('tick-1'), { events: [], currentRevision: -1, streamExists: false }, 'reads as missing')

  const again = await events.appendToStream('tick-1', [ticked(3)], { expectedRevision: 'no_stream' })
  t.equal(again.nextExpectedRevision, 3, 'the revision continues from where it left off')
  const read = await events.readStream('tick-1')
  t.same(read.events.map((e) => [e.revision, e.data.n]), [[3, 3]], 'only the events written since the delete')
  t.equal(read.currentRevision, 3)
})

t.test('given a tombstoned stream, when it is read, then it is missing and marked deleted; when appended to, then StreamDeletedError', async (t) => {
  const events = await withServer(t)
  await events.appendToStream('tick-2', [ticked(0)])
  await events.deleteStream!('tick-2', { hard: true })
  t.same(await events.readStream('tick-2'), { events: [], currentRevision: -1, streamExists: false, streamDeleted: true })
  for (const expectedRevision of ['any', 'no_stream', 0] as const) {
    const err = await events.appendToStream('tick-2', [ticked(1)], { expectedRevision }).catch((e: unknown) => e)
    t.ok(err instanceof StreamDeletedError, `append expecting ${expectedRevision}: StreamDeletedError`)
    t.equal((err as StreamDeletedError).streamName, 'tick-2')
  }
  // Both append paths of the client (BatchAppend and Append) map it.
  const old = await startEsdbTestServer({ serverFeatures: false })
  const legacy = openEsdbEventStore(old.connectionString)
  t.teardown(async () => (await legacy.close(), await old.stop()))
  await legacy.appendToStream('tick-3', [ticked(0)])
  await legacy.deleteStream!('tick-3', { hard: true })
  t.ok((await legacy.appendToStream('tick-3', [ticked(1)]).catch((e: unknown) => e)) instanceof StreamDeletedError, 'Append RPC too')
  // The tombstone is a system record: $all readers never see it as an event.
  t.same((await events.readAll()).map((e) => e.streamName), ['tick-2'])
})

t.test('given a note whose stream was deleted, when a command reaches it, then not_found (soft and hard), never a crash', async (t) => {
  const events = await withServer(t)
  const handler = new CommandHandler(events)
  for (const hard of [false, true]) {
    const noteId = randomUUID()
    const stream = noteStream.of(noteId)
    await handler.handle(stream, create(noteId), noteDecider)
    await handler.handle(stream, edit('before'), noteDecider)
    await events.deleteStream!(stream, { hard })
    const edited = await handler.handle(stream, edit('after'), noteDecider).catch((e: unknown) => e)
    t.ok(edited instanceof DomainError && edited.code === 'not_found', `${hard ? 'hard' : 'soft'} delete: an edit answers not_found (even with the folded state cached)`)
    const loaded = await handler.load(stream, noteDecider)
    t.same(loaded.state, { exists: false }, 'the note reads as not found')
    const recreated = await handler.handle(stream, create(noteId), noteDecider).catch((e: unknown) => e)
    if (hard) t.ok(recreated instanceof DomainError && recreated.code === 'not_found', 'a tombstoned note cannot be created again: not_found, not a 500')
    else t.notOk(recreated instanceof Error, 'a soft-deleted stream may be written again')
  }
})

t.test('given the composed event store of the service, then retention and deletes reach EventStoreDB through its wrappers', async (t) => {
  const server = await startEsdbTestServer()
  const tmp = tempDir()
  const events = await openEventStore({ ...loadConfig({ DATA_DIR: tmp.dir }), esdbUrl: server.connectionString })
  t.teardown(async () => (await events.close(), await server.stop(), tmp.remove()))
  t.type(events.setStreamRetention, 'function', 'setStreamRetention passes through (apikeyusage retention reaches the server)')
  t.type(events.deleteStream, 'function', 'deleteStream passes through')
  await events.appendToStream('tick-4', [ticked(0)])
  await events.deleteStream!('tick-4')
  t.equal((await events.readStream('tick-4')).streamExists, false)
})
