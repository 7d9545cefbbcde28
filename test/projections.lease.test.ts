// The lease of a projection when its document is gone (the read-model store lost at run time):
// the renewal timer and the watch's rebuild (`tryHold`) of the same instance may both find no
// lease and insert one. The second insert's duplicate key used to read as "another instance
// holds it", so the watch did not rebuild in bulk but restarted the loop from position 0: one of
// two paths that explain a CI run whose MongoDB runtime-loss case recovered with no bulk rebuild
// logged (the other: a failed rebuild, test/readModels.watch.test.ts).
import t from 'tap'
import { LEASES, leased } from '../projections/lease.ts'
import type { Projection } from '../projections/runner.ts'
import { embeddedStores } from './support/embeddedStores.ts'

const idle: Projection = { name: 'idle', collections: [], async handle() {} }

t.test('given a lease whose document was lost, when the same instance tries to hold it twice at once, then both attempts hold it', async (t) => {
  const { docs } = embeddedStores(t)
  const l = leased(idle, docs, { ttlMs: 30_000, holder: 'me' })
  t.teardown(() => l.release())
  t.ok(await l.tryHold(), 'held at first')
  await docs.collection(LEASES).drop()
  const both = await Promise.all([l.tryHold(), l.tryHold(), l.tryHold()])
  t.same(both, [true, true, true])
  t.equal((await docs.collection<{ _id: string; holder: string }>(LEASES).findOne({ _id: 'idle' }))?.holder, 'me')
})

t.test('given a lease another instance holds, when this one tries to hold it, then it does not', async (t) => {
  const { docs } = embeddedStores(t)
  const other = leased(idle, docs, { ttlMs: 30_000, holder: 'other' })
  const me = leased(idle, docs, { ttlMs: 30_000, holder: 'me' })
  t.teardown(async () => (await me.release(), await other.release()))
  t.ok(await other.tryHold())
  t.same(await Promise.all([me.tryHold(), me.tryHold()]), [false, false])
})
