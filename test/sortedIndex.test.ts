// The embedded store's sorted index, held against the plainest model of it (a sorted array)
// through thousands of random inserts and removals, across chunk splits.
import t from 'tap'
import { SortedIndex } from '../adapters/embedded/sortedIndex.ts'
import { compareValues } from '../adapters/embedded/query.ts'
import type { Doc } from '../ports/documentStore.ts'

function rng(seed: number) {
  let x = seed
  return () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return (x >>> 0) / 4294967296
  }
}

t.test('given random writes, scans equal a sorted array, forwards and backwards, for every prefix', async (t) => {
  const rand = rng(42)
  const index = new SortedIndex({ keys: { account: 1, at: -1, _id: -1 } })
  const live = new Map<string, Doc>()
  const model = () =>
    [...live.values()].sort(
      (a, b) =>
        compareValues(a.account, b.account) || -compareValues(a.at, b.at) || -compareValues(a._id, b._id),
    )
  const accounts = ['a', 'b', 'c', null]
  for (let step = 0; step < 6000; step++) {
    if (live.size > 0 && rand() < 0.3) {
      const ids = [...live.keys()]
      const id = ids[Math.floor(rand() * ids.length)]!
      index.remove(live.get(id)!)
      live.delete(id)
    } else {
      const doc: Doc = { _id: `n${String(Math.floor(rand() * 1e6)).padStart(7, '0')}-${step}`, account: accounts[Math.floor(rand() * 4)], at: Math.floor(rand() * 50) }
      live.set(doc._id, doc)
      index.insert(doc)
    }
  }
  t.ok(live.size > 2048, `${live.size} documents: more than two chunks`)
  const all = model()
  for (const reverse of [false, true]) {
    t.same([...index.scan(new Map(), 0, reverse)], (reverse ? [...all].reverse() : all).map((d) => d._id), `whole index, reverse=${reverse}`)
    for (const account of accounts) {
      const expected = all.filter((d) => d.account === account).map((d) => d._id)
      t.same([...index.scan(new Map([['account', account]]), 1, reverse)], reverse ? expected.reverse() : expected, `account ${account}, reverse=${reverse}`)
    }
    const expected = all.filter((d) => d.account === 'b' && d.at === 7).map((d) => d._id)
    t.same([...index.scan(new Map<string, unknown>([['account', 'b'], ['at', 7]]), 2, reverse)], reverse ? expected.reverse() : expected, `two fields bound, reverse=${reverse}`)
  }
  t.same([...index.scan(new Map([['account', 'zzz']]), 1, false)], [], 'a key after every entry')
})

t.test('a unique index reports the other holder of a key', async (t) => {
  const index = new SortedIndex({ keys: { email: 1 }, unique: true })
  for (let i = 0; i < 3000; i++) index.insert({ _id: `p${i}`, email: `user${i}@x` })
  t.equal(index.conflict({ _id: 'new', email: 'user1500@x' }), 'p1500')
  t.equal(index.conflict({ _id: 'p1500', email: 'user1500@x' }), null, 'a document does not collide with itself')
  t.equal(index.conflict({ _id: 'new', email: 'nobody@x' }), null)
})
