import t from 'tap'
import { join } from 'node:path'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { documentStoreConformance } from './conformance/documentStore.suite.ts'
import { tempDir } from './support/tmp.ts'
import type { DocumentStore } from '../ports/documentStore.ts'

documentStoreConformance(t, 'embedded', async () => {
  const tmp = tempDir()
  const path = join(tmp.dir, 'readmodels.db')
  const store = openEmbeddedDocumentStore({ path })
  return {
    store,
    reopen: async () => openEmbeddedDocumentStore({ path }),
    cleanup: async () => {
      await store.close()
      tmp.remove()
    },
  }
})

t.test('embedded: an index serves equality + sort and stays correct through updates and deletes', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const store = openEmbeddedDocumentStore({ path: join(tmp.dir, 'r.db') })
  const c = store.collection('notes')
  await c.createIndex({ keys: { account: 1, createdAt: -1, _id: -1 } })
  for (let i = 0; i < 500; i++) {
    await c.insertOne({ _id: `n${String(i).padStart(4, '0')}`, account: i % 3 === 0 ? 'a' : 'b', createdAt: `2026-01-01T00:${String(i % 60).padStart(2, '0')}:00Z` })
  }
  await c.updateMany({ account: 'a', createdAt: { $lt: '2026-01-01T00:10:00Z' } }, { $set: { account: 'c' } })
  await c.deleteMany({ account: 'b', createdAt: '2026-01-01T00:59:00Z' })
  const viaIndex = await c.find({ account: 'a' }, { sort: { createdAt: -1, _id: -1 }, limit: 30 })
  const all = (await c.find({})).filter((d) => d.account === 'a')
  all.sort((x, y) => (x.createdAt === y.createdAt ? (x._id < y._id ? 1 : -1) : (x.createdAt as string) < (y.createdAt as string) ? 1 : -1))
  t.same(viaIndex.map((d) => d._id), all.slice(0, 30).map((d) => d._id))
  // 333 documents have i % 3 !== 0; the 8 with i % 60 === 59 are among them and were deleted.
  t.equal(await c.countDocuments({ account: 'b' }), 325)
  await store.close()
})

t.test('embedded: a write through a batch that has ended is refused, not silently made outside it', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const store = openEmbeddedDocumentStore({ path: join(tmp.dir, 'r.db') })
  let leaked: DocumentStore | undefined
  await store.writeBatch(async (batch) => {
    leaked = batch
    await batch.collection('c').insertOne({ _id: 'in' })
  })
  await t.rejects(leaked!.collection('c').insertOne({ _id: 'late' }), /write batch has ended/)
  t.same((await store.collection('c').find({})).map((d) => d._id), ['in'])
  await store.close()
})
