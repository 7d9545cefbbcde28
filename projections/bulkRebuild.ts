// A rebuild in bulk, for a read-model store where every write is a round trip (MongoDB): the
// log is replayed into a staging store in this process (the embedded store in memory, where a
// write costs microseconds), and each collection is then copied to the real store with bulk
// inserts of CHUNK documents, checkpoint last. The projections' code is the same as in the live
// runner, so the result is the same as `rebuildProjection` (test/scale.rebuild.test.ts compares
// them). Run it while the projection is stopped (or while another instance holds its lease and
// nobody writes); the staging copy of the read model must fit in memory.
import type { DocumentStore } from '../ports/documentStore.ts'
import { CHECKPOINTS, readCheckpoint, rebuildProjection, type Projection, type RunOptions } from './runner.ts'

const CHUNK = 1000

export async function rebuildInBulk(projection: Projection, options: Omit<RunOptions, 'stopAfter'> & { staging: DocumentStore }): Promise<number> {
  const { events, docs, staging, batchSize } = options
  const count = await rebuildProjection(projection, { events, docs: staging, ...(batchSize ? { batchSize } : {}) })
  for (const name of projection.collections) {
    await docs.collection(name).drop()
    const all = await staging.collection(name).find({}, { sort: { _id: 1 } })
    for (let i = 0; i < all.length; i += CHUNK) await docs.collection(name).insertMany(all.slice(i, i + CHUNK))
  }
  await projection.setup?.(docs)
  // The checkpoint last: until it is written, a runner starting here replays from the old one.
  const position = await readCheckpoint(staging, projection.name)
  const checkpoints = docs.collection<{ _id: string; position: number; updatedAt: string }>(CHECKPOINTS)
  await checkpoints.replaceOne({ _id: projection.name }, { _id: projection.name, position, updatedAt: new Date().toISOString() }, { upsert: true })
  return count
}
