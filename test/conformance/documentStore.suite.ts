// One conformance suite for every DocumentStore adapter: the embedded store must answer exactly
// as MongoDB (and FerretDB) do for the subset the read models use. Each test uses a fresh
// collection name so the suite can run against a shared server.
import type { Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { DuplicateKeyError, type Doc, type DocumentStore } from '../../ports/documentStore.ts'

export type DocumentStoreFactory = () => Promise<{ store: DocumentStore; cleanup: () => Promise<void>; reopen?: () => Promise<DocumentStore> }>

const fresh = () => 'c_' + randomUUID().replace(/-/g, '').slice(0, 12)

const notes: Doc[] = [
  { _id: 'n1', account: 'a', title: 'Kick-off', status: 'ready', createdAt: '2026-01-01T00:00:00.000Z', tags: ['x', 'y'], folderId: null, minutes: 5, meta: { lang: 'es', words: 100 } },
  { _id: 'n2', account: 'a', title: 'Budget', status: 'processing', createdAt: '2026-01-02T00:00:00.000Z', tags: ['y'], folderId: 'f1', minutes: 12, meta: { lang: 'en', words: 300 } },
  { _id: 'n3', account: 'a', title: 'Retro', status: 'failed', createdAt: '2026-01-03T00:00:00.000Z', tags: [], folderId: 'f1', minutes: 0, meta: { lang: 'es', words: 0 } },
  { _id: 'n4', account: 'b', title: 'Other', status: 'ready', createdAt: '2026-01-04T00:00:00.000Z', tags: ['x'], minutes: 30, meta: { lang: 'de', words: 50 } },
  { _id: 'n5', account: 'a', title: 'Ñandú día', status: 'ready', createdAt: '2026-01-05T00:00:00.000Z', tags: ['x', 'y', 'z'], folderId: null, minutes: 7.5, meta: { lang: 'es', words: 70 } },
]

export function documentStoreConformance(t: Test, name: string, factory: DocumentStoreFactory): void {
  t.test(`DocumentStore conformance: ${name}`, async (t) => {
    const { store, cleanup, reopen } = await factory()
    t.teardown(cleanup)

    const seeded = async () => {
      const c = store.collection(fresh())
      for (const n of notes) await c.insertOne(structuredClone(n))
      return c
    }
    const ids = (docs: Doc[]) => docs.map((d) => d._id)

    t.test('filters: equality, dotted paths, comparison, $in/$nin, $exists, arrays, null', async (t) => {
      const c = await seeded()
      const q = async (filter: Record<string, unknown>) => ids(await c.find(filter, { sort: { _id: 1 } }))
      t.same(await q({ account: 'a', status: 'ready' }), ['n1', 'n5'])
      t.same(await q({ 'meta.lang': 'es' }), ['n1', 'n3', 'n5'])
      t.same(await q({ minutes: { $gt: 5, $lte: 12 } }), ['n2', 'n5'])
      t.same(await q({ createdAt: { $gte: '2026-01-03T00:00:00.000Z' } }), ['n3', 'n4', 'n5'])
      t.same(await q({ status: { $in: ['failed', 'processing'] } }), ['n2', 'n3'])
      t.same(await q({ status: { $nin: ['ready'] } }), ['n2', 'n3'])
      t.same(await q({ _id: { $in: ['n4', 'missing', 'n2', 'n4'] } }), ['n2', 'n4'], '_id $in: each listed document once, missing ones left out')
      t.same(await q({ _id: { $in: ['n1', 'n2', 'n4'] }, account: 'a' }), ['n1', 'n2'], '_id $in with another field')
      t.same(ids(await c.find({ _id: { $in: ['n1', 'n5', 'n3'] } }, { sort: { createdAt: -1 }, limit: 2 })), ['n5', 'n3'], '_id $in, sorted and limited')
      t.same(await q({ status: { $ne: 'ready' }, account: 'a' }), ['n2', 'n3'])
      t.same(await q({ tags: 'x' }), ['n1', 'n4', 'n5'], 'equality on an array field matches an element')
      t.same(await q({ tags: { $all: ['x', 'y'] } }), ['n1', 'n5'])
      t.same(await q({ tags: { $in: ['z', 'nope'] } }), ['n5'])
      t.same(await q({ tags: { $size: 0 } }), ['n3'])
      t.same(await q({ tags: ['y'] }), ['n2'], 'a whole-array value matches the array exactly')
      t.same(await q({ folderId: null }), ['n1', 'n4', 'n5'], 'null matches null and missing')
      t.same(await q({ folderId: { $exists: false } }), ['n4'])
      t.same(await q({ folderId: { $exists: true } }), ['n1', 'n2', 'n3', 'n5'])
      t.same(await q({ $or: [{ minutes: 0 }, { 'meta.lang': 'de' }] }), ['n3', 'n4'])
      t.same(await q({ $and: [{ account: 'a' }, { minutes: { $gte: 7 } }] }), ['n2', 'n5'])
      t.same(await q({ $nor: [{ account: 'a' }] }), ['n4'])
      t.same(await q({ minutes: { $not: { $gt: 5 } } }), ['n1', 'n3'])
      t.same(await q({ title: { $regex: '^b', $options: 'i' } }), ['n2'])
      t.same(await q({ meta: { lang: 'en', words: 300 } }), ['n2'], 'embedded document equality')
      t.same(await q({ nothing: 'here' }), [])
      t.same(await q({ _id: 'n3' }), ['n3'])
    })

    t.test('$elemMatch on arrays of documents', async (t) => {
      const c = store.collection(fresh())
      await c.insertOne({ _id: 'e1', items: [{ k: 'a', v: 1 }, { k: 'b', v: 5 }] })
      await c.insertOne({ _id: 'e2', items: [{ k: 'a', v: 5 }] })
      t.same(ids(await c.find({ items: { $elemMatch: { k: 'a', v: { $gte: 5 } } } })), ['e2'])
      t.same(ids(await c.find({ 'items.k': 'b' })), ['e1'], 'dotted path through an array')
    })

    t.test('sort, skip, limit, projection, count', async (t) => {
      const c = await seeded()
      t.same(ids(await c.find({}, { sort: { createdAt: -1 }, limit: 2 })), ['n5', 'n4'])
      t.same(ids(await c.find({}, { sort: { createdAt: -1 }, skip: 1, limit: 2 })), ['n4', 'n3'])
      t.same(ids(await c.find({}, { sort: { account: 1, minutes: -1 } })), ['n2', 'n5', 'n1', 'n3', 'n4'])
      t.same(ids(await c.find({}, { sort: { 'meta.words': 1 } })), ['n3', 'n4', 'n5', 'n1', 'n2'])
      t.same(ids(await c.find({}, { sort: { folderId: 1, _id: 1 } })), ['n1', 'n4', 'n5', 'n2', 'n3'], 'missing and null sort first, as equals')
      const projected = await c.findOne({ _id: 'n2' }, { projection: { title: 1, 'meta.lang': 1 } })
      t.same(projected, { _id: 'n2', title: 'Budget', meta: { lang: 'en' } })
      t.equal(await c.countDocuments({ account: 'a' }), 4)
      t.equal(await c.countDocuments(), 5)
      t.equal(await c.findOne({ account: 'zzz' }), null)
      const first = await c.findOne({ account: 'a' }, { sort: { createdAt: -1 } })
      t.equal(first?._id, 'n5')
    })

    t.test('cursor pagination over a compound sort is stable', async (t) => {
      const c = store.collection(fresh())
      await c.createIndex({ keys: { account: 1, createdAt: -1, _id: -1 } })
      const at = '2026-02-01T00:00:00.000Z'
      for (let i = 0; i < 25; i++) await c.insertOne({ _id: `p${String(i).padStart(2, '0')}`, account: 'a', createdAt: i < 10 ? at : `2026-02-0${2 + (i % 7)}T00:00:00.000Z` })
      const pages: string[] = []
      let cursor: Doc | undefined
      for (;;) {
        const filter: Record<string, unknown> = { account: 'a' }
        if (cursor) filter.$or = [{ createdAt: { $lt: cursor.createdAt } }, { createdAt: cursor.createdAt, _id: { $lt: cursor._id } }]
        const page = await c.find(filter, { sort: { createdAt: -1, _id: -1 }, limit: 7 })
        pages.push(...ids(page))
        if (page.length < 7) break
        cursor = page[page.length - 1]
      }
      const all = ids(await c.find({ account: 'a' }, { sort: { createdAt: -1, _id: -1 } }))
      t.same(pages, all)
      t.equal(new Set(pages).size, 25)
    })

    t.test('updates: $set $unset $inc $push $addToSet $pull $max $min, dotted', async (t) => {
      const c = await seeded()
      const r = await c.updateOne({ _id: 'n1' }, { $set: { title: 'New', 'meta.words': 101, 'deep.a.b': 1 }, $unset: { folderId: '' }, $inc: { minutes: 2, views: 1 } })
      t.same(r, { matchedCount: 1, modifiedCount: 1, upsertedId: null })
      await c.updateOne({ _id: 'n1' }, { $push: { tags: 'w' }, $addToSet: { labels: { $each: ['l1', 'l2', 'l1'] } } })
      await c.updateOne({ _id: 'n1' }, { $addToSet: { tags: 'x', labels: 'l2' }, $push: { log: { $each: [1, 2] } } })
      await c.updateOne({ _id: 'n1' }, { $pull: { tags: 'y' }, $max: { minutes: 3, peak: 9 }, $min: { 'meta.words': 50 } })
      const d = await c.findOne({ _id: 'n1' })
      t.same(d, {
        _id: 'n1', account: 'a', title: 'New', status: 'ready', createdAt: '2026-01-01T00:00:00.000Z', tags: ['x', 'w'], minutes: 7,
        meta: { lang: 'es', words: 50 }, deep: { a: { b: 1 } }, views: 1, labels: ['l1', 'l2'], log: [1, 2], peak: 9,
      })
      const noop = await c.updateOne({ _id: 'n1' }, { $set: { title: 'New' } })
      t.same(noop, { matchedCount: 1, modifiedCount: 0, upsertedId: null }, 'setting the same value modifies nothing')
      const none = await c.updateOne({ _id: 'zzz' }, { $set: { title: 'x' } })
      t.same(none, { matchedCount: 0, modifiedCount: 0, upsertedId: null })
      const many = await c.updateMany({ account: 'a' }, { $inc: { minutes: 1 } })
      t.same(many, { matchedCount: 4, modifiedCount: 4, upsertedId: null })
      t.equal((await c.findOne({ _id: 'n2' }))?.minutes, 13)
    })

    t.test('upserts build the document from equality filters and $setOnInsert', async (t) => {
      const c = store.collection(fresh())
      const r1 = await c.updateOne({ _id: 'acc-1', kind: 'balance' }, { $setOnInsert: { createdAt: 't0' }, $inc: { balance: 10 }, $set: { last: 1 } }, { upsert: true })
      t.same(r1, { matchedCount: 0, modifiedCount: 0, upsertedId: 'acc-1' })
      const r2 = await c.updateOne({ _id: 'acc-1' }, { $setOnInsert: { createdAt: 't1' }, $inc: { balance: 5 } }, { upsert: true })
      t.same(r2, { matchedCount: 1, modifiedCount: 1, upsertedId: null })
      t.same(await c.findOne({ _id: 'acc-1' }), { _id: 'acc-1', kind: 'balance', createdAt: 't0', balance: 15, last: 1 })
      // The idempotent-projection pattern: only apply when the stored position is older.
      const guard = { _id: 'acc-1', $or: [{ position: { $exists: false } }, { position: { $lt: 7 } }] }
      t.equal((await c.updateOne(guard, { $set: { position: 7 }, $inc: { balance: 1 } })).modifiedCount, 1)
      t.equal((await c.updateOne(guard, { $set: { position: 7 }, $inc: { balance: 1 } })).modifiedCount, 0)
      t.equal((await c.findOne({ _id: 'acc-1' }))?.balance, 16)
      const replaced = await c.replaceOne({ _id: 'r1' }, { _id: 'r1', v: 1 }, { upsert: true })
      t.equal(replaced.upsertedId, 'r1')
      await c.replaceOne({ _id: 'r1' }, { _id: 'r1', w: 2 })
      t.same(await c.findOne({ _id: 'r1' }), { _id: 'r1', w: 2 })
    })

    t.test('duplicate keys and unique indexes', async (t) => {
      const c = store.collection(fresh())
      await c.createIndex({ keys: { email: 1 }, unique: true })
      await c.insertOne({ _id: 'u1', email: 'a@x' })
      await t.rejects(c.insertOne({ _id: 'u1', email: 'b@x' }), DuplicateKeyError)
      await t.rejects(c.insertOne({ _id: 'u2', email: 'a@x' }), DuplicateKeyError)
      await c.insertOne({ _id: 'u3', email: 'c@x' })
      await t.rejects(c.updateOne({ _id: 'u3' }, { $set: { email: 'a@x' } }), DuplicateKeyError)
      t.same(ids(await c.find({}, { sort: { _id: 1 } })), ['u1', 'u3'], 'rejected writes left nothing behind')
      t.equal((await c.findOne({ _id: 'u3' }))?.email, 'c@x')
      await c.createIndex({ keys: { email: 1 }, unique: true })
    })

    t.test('a filter of _id and other fields matches the one document only when every field does', async (t) => {
      const c = await seeded()
      t.same(ids(await c.find({ _id: 'n1', account: 'a' })), ['n1'])
      t.equal(await c.findOne({ _id: 'n1', account: 'b' }), null, "another tenant's id finds nothing")
      t.same(await c.findOne({ _id: 'n2', tags: 'y', minutes: { $gt: 10 } }, { projection: { title: 1, 'meta.lang': 1 } }), { _id: 'n2', title: 'Budget', meta: { lang: 'en' } })
      t.equal(await c.findOne({ _id: 'n2', 'meta.words': { $lt: 100 } }), null)
      t.same(await c.find({ _id: 'n1', account: 'a' }, { skip: 1 }), [])
      t.same(ids(await c.find({ _id: 'n3', $or: [{ status: 'failed' }, { minutes: 99 }] })), ['n3'])
      t.equal(await c.countDocuments({ _id: 'n4', account: 'b' }), 1)
    })

    t.test('insertManyIfAbsent: inserts the free ids, leaves what is stored, the first of two with one id wins; a unique index is respected', async (t) => {
      const c = store.collection(fresh())
      await c.createIndex({ keys: { email: 1 }, unique: true })
      t.equal(await c.insertManyIfAbsent([]), 0)
      await c.insertOne({ _id: 'm2', email: 'b@x', v: 'stored' })
      const n = await c.insertManyIfAbsent([
        { _id: 'm1', email: 'a@x', v: 'new' },
        { _id: 'm2', email: 'b2@x', v: 'new' },
        { _id: 'm3', email: 'c@x', v: 'first' },
        { _id: 'm3', email: 'c2@x', v: 'second' },
        { _id: 'm4', email: 'b@x', v: 'collides on email' },
        { _id: 'm5', email: 'e@x', v: 'new' },
      ])
      t.equal(n, 3, 'm1, m3 (the first) and m5')
      t.same(await c.find({}, { sort: { _id: 1 } }), [
        { _id: 'm1', email: 'a@x', v: 'new' },
        { _id: 'm2', email: 'b@x', v: 'stored' },
        { _id: 'm3', email: 'c@x', v: 'first' },
        { _id: 'm5', email: 'e@x', v: 'new' },
      ])
      t.equal(await c.insertManyIfAbsent([{ _id: 'm1', email: 'a@x', v: 'again' }]), 0, 'all there already: nothing inserted')
      const many = Array.from({ length: 1500 }, (_, i) => ({ _id: `k${String(i).padStart(4, '0')}`, email: `k${i}@x` }))
      t.equal(await c.insertManyIfAbsent(many), 1500)
      t.equal(await c.countDocuments({ _id: { $regex: '^k' } }), 1500)
    })

    t.test('writeGuarded: given a batch of inserts, guarded replaces, updates and deletes, then only the writes whose filter matches land; a collision refuses only itself', async (t) => {
      const c = store.collection(fresh())
      await c.createIndex({ keys: { email: 1 }, unique: true })
      t.same(await c.writeGuarded([]), { landed: 0, collided: [] })
      for (const d of [
        { _id: 'g1', email: 'g1@x', v: 'one', revision: 1 },
        { _id: 'g2', email: 'g2@x', v: 'two', revision: 1 },
        { _id: 'g3', email: 'g3@x', v: 'three', revision: 1 },
        { _id: 'g4', email: 'g4@x', v: 'four', revision: 1 },
        { _id: 'g5', email: 'g5@x', v: 'five', revision: 1 },
      ])
        await c.insertOne(d)
      const result = await c.writeGuarded([
        { insert: { _id: 'g6', email: 'g6@x', v: 'new', revision: 0 } },
        { insert: { _id: 'g1', email: 'other@x', v: 'taken id', revision: 0 } },
        { replace: { _id: 'g2', email: 'g2@x', v: 'two, replaced', revision: 2 }, filter: { _id: 'g2', revision: 1 } },
        { replace: { _id: 'g3', email: 'g3@x', v: 'late', revision: 2 }, filter: { _id: 'g3', revision: 0 } },
        { update: { $set: { v: 'four, updated', revision: 2 } }, filter: { _id: 'g4', revision: 1 } },
        { delete: { _id: 'g1', revision: 7 } },
        { update: { $set: { v: 'nothing there' } }, filter: { _id: 'missing' } },
        { insert: { _id: 'g7', email: 'g2@x', v: 'collides on email', revision: 0 } },
      ])
      t.same(result, { landed: 3, collided: [1, 7] }, 'g6 inserted, g2 replaced, g4 updated; g3 late and g1 at another revision left alone')
      t.same(await c.find({}, { sort: { _id: 1 } }), [
        { _id: 'g1', email: 'g1@x', v: 'one', revision: 1 },
        { _id: 'g2', email: 'g2@x', v: 'two, replaced', revision: 2 },
        { _id: 'g3', email: 'g3@x', v: 'three', revision: 1 },
        { _id: 'g4', email: 'g4@x', v: 'four, updated', revision: 2 },
        { _id: 'g5', email: 'g5@x', v: 'five', revision: 1 },
        { _id: 'g6', email: 'g6@x', v: 'new', revision: 0 },
      ])
      await t.rejects(c.writeGuarded([{ update: { $set: { email: 'g1@x' } }, filter: { _id: 'g5', revision: 1 } }]), DuplicateKeyError, 'an update colliding with a unique index throws, as updateOne does')
      t.same(await c.findOne({ _id: 'g5' }), { _id: 'g5', email: 'g5@x', v: 'five', revision: 1 })
      t.same(await c.writeGuarded([{ delete: { _id: 'g1', revision: 1 } }, { delete: { _id: 'g6' } }]), { landed: 2, collided: [] })
      t.same(ids(await c.find({}, { sort: { _id: 1 } })), ['g2', 'g3', 'g4', 'g5'])
      // Kept small: on FerretDB 1.x each guarded update scans the collection.
      const many = Array.from({ length: 200 }, (_, i) => ({ _id: `w${String(i).padStart(4, '0')}`, email: `w${i}@x`, revision: 0 }))
      t.same(await c.writeGuarded(many.map((d) => ({ insert: d }))), { landed: 200, collided: [] })
      t.same(await c.writeGuarded(many.map((d) => ({ update: { $set: { revision: 1 } }, filter: { _id: d._id, revision: 0 } }))), { landed: 200, collided: [] })
      t.equal(await c.countDocuments({ revision: 1, _id: { $regex: '^w' } }), 200)
    })

    t.test('deletes and drop', async (t) => {
      const c = await seeded()
      t.same(await c.deleteOne({ account: 'a' }), { deletedCount: 1 })
      t.same(await c.deleteMany({ account: 'a' }), { deletedCount: 3 })
      t.equal(await c.countDocuments(), 1)
      await c.drop()
      t.equal(await c.countDocuments(), 0)
      await c.insertOne({ _id: 'again' })
      t.equal(await c.countDocuments(), 1, 'a dropped collection can be written again')
    })

    t.test('returned documents are copies: mutating them changes nothing stored', async (t) => {
      const c = await seeded()
      const d = await c.findOne({ _id: 'n1' })
      ;(d!.meta as Record<string, unknown>).lang = 'mutated'
      t.equal(((await c.findOne({ _id: 'n1' }))!.meta as Record<string, unknown>).lang, 'es')
    })

    t.test('writeBatch returns what its function returns and its writes are visible', async (t) => {
      const name = fresh()
      const result = await store.writeBatch(async (batch) => {
        await batch.collection(name).insertOne({ _id: 'b1', v: 1 })
        await batch.collection(name).updateOne({ _id: 'b1' }, { $inc: { v: 1 } })
        t.same(await batch.collection(name).findOne({ _id: 'b1' }), { _id: 'b1', v: 2 }, 'the batch reads its own writes')
        return 'done'
      })
      t.equal(result, 'done')
      t.same(await store.collection(name).find({}), [{ _id: 'b1', v: 2 }])
    })

    // The state every failing-batch test starts from and must find again after an atomic rollback.
    const setUpForBatch = async () => {
      const name = fresh()
      const other = fresh()
      const c = store.collection(name)
      await c.createIndex({ keys: { email: 1 }, unique: true })
      await c.insertOne({ _id: 'k1', email: 'a@x', n: 1 })
      await c.insertOne({ _id: 'k2', email: 'b@x', n: 1 })
      await store.collection(other).insertOne({ _id: 'o1', v: 1 })
      return { name, other }
    }
    const stateOf = async (s: DocumentStore, name: string, other: string) => ({
      docs: await s.collection(name).find({}, { sort: { _id: 1 } }),
      byEmail: ids(await s.collection(name).find({ email: { $in: ['a@x', 'b@x', 'c@x', 'd@x'] } }, { sort: { email: 1 } })),
      other: await s.collection(other).find({}, { sort: { _id: 1 } }),
    })
    const failingBatch = (name: string, other: string) =>
      store.writeBatch(async (batch) => {
        const c = batch.collection(name)
        await c.insertOne({ _id: 'k3', email: 'c@x', n: 1 })
        await c.updateOne({ _id: 'k1' }, { $set: { email: 'd@x' }, $inc: { n: 1 } })
        await c.deleteOne({ _id: 'k2' })
        await c.createIndex({ keys: { n: 1 } })
        await batch.collection(other).drop()
        await batch.collection(other).insertOne({ _id: 'o2', v: 2 })
        throw new Error('projection failed')
      })

    if (store.atomicWriteBatches) {
      t.test('atomic store: a failing write batch leaves nothing behind', async (t) => {
        const { name, other } = await setUpForBatch()
        const before = await stateOf(store, name, other)
        await t.rejects(failingBatch(name, other), /projection failed/, 'the error comes back')
        t.same(await stateOf(store, name, other), before, 'memory holds the state before the batch')
        // The unique index must be as before too: the emails the batch freed and took.
        await t.rejects(store.collection(name).insertOne({ _id: 'k9', email: 'a@x' }), DuplicateKeyError)
        await store.collection(name).insertOne({ _id: 'k3', email: 'c@x', n: 5 })
        await store.collection(name).deleteOne({ _id: 'k3' })
        if (reopen) {
          const again = await reopen()
          t.same(await stateOf(again, name, other), before, 'and so does the store reopened')
          await again.close()
        }
      })
    } else {
      t.test('non-atomic store: a failing write batch passes its error on and keeps the writes made before it', async (t) => {
        const { name, other } = await setUpForBatch()
        await t.rejects(failingBatch(name, other), /projection failed/)
        t.same(await store.collection(name).findOne({ _id: 'k3' }), { _id: 'k3', email: 'c@x', n: 1 })
        t.same(await store.collection(other).find({}), [{ _id: 'o2', v: 2 }])
      })
    }

    t.test('writes from outside a batch are not part of it, even while it is open', async (t) => {
      const name = fresh()
      const outside = fresh()
      const order: string[] = []
      let outsideWrites: Promise<unknown> | undefined
      await t.rejects(
        store.writeBatch(async (batch) => {
          await batch.collection(name).insertOne({ _id: 'in-batch' })
          // Issued while the batch is open and has written: another collection, and its own.
          outsideWrites = Promise.all([
            store.collection(outside).insertOne({ _id: 'outside' }),
            store.collection(name).insertOne({ _id: 'outside-same-collection' }),
          ]).then(() => order.push('outside writes done'))
          await new Promise((r) => setTimeout(r, 20))
          order.push('batch failed')
          throw new Error('projection failed')
        }),
        /projection failed/,
      )
      await outsideWrites
      t.same(ids(await store.collection(outside).find({})), ['outside'], 'the outside write to another collection stands')
      t.same(
        ids(await store.collection(name).find({}, { sort: { _id: 1 } })),
        store.atomicWriteBatches ? ['outside-same-collection'] : ['in-batch', 'outside-same-collection'],
        'the outside write to the same collection stands',
      )
      if (store.atomicWriteBatches) t.same(order, ['batch failed', 'outside writes done'], 'outside writes waited for the batch to end')
      if (reopen) {
        const again = await reopen()
        t.same(ids(await again.collection(outside).find({})), ['outside'])
        t.ok(await again.collection(name).findOne({ _id: 'outside-same-collection' }))
        if (store.atomicWriteBatches) t.equal(await again.collection(name).findOne({ _id: 'in-batch' }), null)
        await again.close()
      }
    })

    t.test('a batch that has not written yet holds up no one; concurrent batches both apply', async (t) => {
      const name = fresh()
      let release!: () => void
      const gate = new Promise<void>((r) => (release = r))
      const slow = store.writeBatch(async (batch) => {
        await gate // e.g. waiting for a broker before writing a checkpoint
        await batch.collection(name).insertOne({ _id: 'slow' })
      })
      await store.collection(name).insertOne({ _id: 'outside' })
      const quick = store.writeBatch(async (batch) => {
        await batch.collection(name).insertOne({ _id: 'quick' })
      })
      await quick
      t.same(ids(await store.collection(name).find({}, { sort: { _id: 1 } })), ['outside', 'quick'], 'others wrote while the slow batch waited')
      release()
      await slow
      t.same(ids(await store.collection(name).find({}, { sort: { _id: 1 } })), ['outside', 'quick', 'slow'])
      if (reopen) {
        const again = await reopen()
        t.same(ids(await again.collection(name).find({}, { sort: { _id: 1 } })), ['outside', 'quick', 'slow'])
        await again.close()
      }
    })

    if (reopen) {
      t.test('documents and indexes persist across a reopen', async (t) => {
        const name = fresh()
        const c = store.collection(name)
        await c.createIndex({ keys: { email: 1 }, unique: true })
        await c.insertOne({ _id: 'p1', email: 'a@x', n: 1 })
        await c.updateOne({ _id: 'p1' }, { $inc: { n: 1 } })
        const again = await reopen()
        const c2 = again.collection(name)
        t.same(await c2.findOne({ _id: 'p1' }), { _id: 'p1', email: 'a@x', n: 2 })
        await t.rejects(c2.insertOne({ _id: 'p2', email: 'a@x' }), DuplicateKeyError)
        await again.close()
      })
    }
  })
}
