// A MongoDB store whose client keeps failing is given a new one. After FerretDB was stopped and
// started again under load, a client once failed every operation for minutes with the error of a
// connection the old server had closed, while a fresh client in the same process read at once:
// the projections process's key-store client stalled every loop (test/scale.faults.test.ts).
// That state could not be made on purpose here; a client closed under the store fails the same
// way (every operation, at once, for good) and stands in for it.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { MongoBulkWriteError, MongoNetworkError, MongoServerError } from 'mongodb'
import { currentMongoClient, dropMongoDatabase, openMongoDocumentStore, unreachable } from '../adapters/mongodb/documentStore.ts'
import { pollUntil } from './support/pollUntil.ts'

const url = process.env.MONGO_URL

t.test('given a bulk write cut off by the network, then it counts as the store not answering (503), while a duplicate key does not', async (t) => {
  // As the driver builds them (bulk/common.ts): a driver error during the bulk, wrapped.
  const cut = new MongoBulkWriteError(new MongoNetworkError('connection 5 to 127.0.0.1:27142 closed'), {} as never)
  t.ok(unreachable(cut), 'a network error inside a bulk write error')
  t.ok(unreachable(new MongoNetworkError('connect ECONNREFUSED')))
  // The driver let this one through unwrapped when FerretDB stopped under a write load (a 500).
  t.ok(unreachable(Object.assign(new Error('This socket has been ended by the other party'), { code: 'EPIPE' })), 'a raw socket error')
  const duplicate = new MongoBulkWriteError({ message: 'E11000 duplicate key', code: 11000, writeErrors: [{ code: 11000 } as never] }, {} as never)
  t.notOk(unreachable(duplicate), 'a write error is an answer')
  t.notOk(unreachable(new MongoServerError({ message: 'bad', code: 2 })), 'a server error is an answer')
  t.ok(unreachable(new MongoServerError({ message: 'interrupted at shutdown', code: 11600 })), 'but not "I am shutting down"')
})

if (!url) {
  t.skip('MONGO_URL not set: MongoDB suite needs MONGO_URL (npm test starts FerretDB and sets it)', () => {})
} else {
  t.test('given a store whose client fails every operation, when the failures last past reconnectAfterMs, then the store replaces its client and answers again', async (t) => {
    const dbName = 'test_reconnect_' + randomUUID().replace(/-/g, '').slice(0, 16)
    const lines: string[] = []
    const store = await openMongoDocumentStore(url, dbName, { reconnectAfterMs: 300, log: (l) => lines.push(l) })
    t.teardown(async () => {
      await store.close()
      await dropMongoDatabase(url, dbName)
    })
    // Collections held from before, as the key store and the projections hold theirs.
    const notes = store.collection<{ _id: string; title: string }>('notes')
    await notes.insertOne({ _id: 'n1', title: 'kept' })

    const broken = currentMongoClient(store)!
    await broken.close()
    await t.rejects(notes.findOne({ _id: 'n1' }), { name: 'DocumentStoreUnavailableError' }, 'the broken client fails, as "unavailable" (a 503 at the edges, not a 500)')
    const found = await pollUntil('an answer on a new client', async () => notes.findOne({ _id: 'n1' }).catch(() => null), 10_000, 50)
    t.same(found, { _id: 'n1', title: 'kept' }, 'the same collection object reads again')
    t.not(currentMongoClient(store), broken, 'a new client')
    t.match(lines, [/^mongodb: operations on database test_reconnect_\w+ failed for \d+ s \(last: .+\); replaced the client$/])

    // One success resets the clock: failures spread over time without a lasting outage replace nothing.
    const current = currentMongoClient(store)
    await notes.findOne({ _id: 'missing' }).catch(() => null)
    t.equal(currentMongoClient(store), current)
  })
}
