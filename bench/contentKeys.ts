// What moving the content keys into the shared store costs (docs/container-image.md): issuing
// ids for new notes (the create path: keys made ahead, 256 per write) and looking up the key of a
// note another process sealed (a projection's first read of a new note; then cached for 1 s).
// Baseline from the same run: the one-host SQLite key file. Needs MONGO_URL (FerretDB in tests).
//
//   MONGO_URL=mongodb://127.0.0.1:27017/ npx tsx bench/contentKeys.ts [count]
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { openSqliteContentKeys } from '../adapters/sqlite/contentKeys.ts'
import { documentContentKeys } from '../adapters/documentStore/contentKeys.ts'
import { openMongoDocumentStore, dropMongoDatabase } from '../adapters/mongodb/documentStore.ts'
import type { ContentKeyStore } from '../ports/contentKeys.ts'

const url = process.env.MONGO_URL
if (!url) throw new Error('set MONGO_URL')
const count = Number(process.argv[2] ?? 2000)

async function measure(name: string, writer: ContentKeyStore, reader: ContentKeyStore) {
  let t0 = performance.now()
  const ids: string[] = []
  for (let i = 0; i < count; i++) ids.push(await writer.issueId())
  const issue = performance.now() - t0
  t0 = performance.now()
  const lat: number[] = []
  for (const id of ids) {
    const s = performance.now()
    const k = await reader.key(id, { create: false })
    lat.push(performance.now() - s)
    if (k.kind !== 'key') throw new Error(`${name}: key of ${id} not found by the other process`)
  }
  const read = performance.now() - t0
  lat.sort((a, b) => a - b)
  const p = (q: number) => lat[Math.min(lat.length - 1, Math.floor(q * lat.length))]!.toFixed(3)
  console.log(`${name.padEnd(22)} issue ${((count / issue) * 1000).toFixed(0).padStart(7)} ids/s   other-process lookup ${((count / read) * 1000).toFixed(0).padStart(6)} keys/s (p50 ${p(0.5)} ms, p99 ${p(0.99)} ms)`)
}

const dir = mkdtempSync(join(tmpdir(), 'bench-keys-'))
try {
  const path = join(dir, 'keys.db')
  const a = openSqliteContentKeys({ path })
  const b = openSqliteContentKeys({ path })
  await measure('SQLite keys.db (base)', a, b)
  await a.close()
  await b.close()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
const db = `bench_keys_${randomUUID().slice(0, 8)}`
try {
  const a = documentContentKeys(await openMongoDocumentStore(url, db))
  const b = documentContentKeys(await openMongoDocumentStore(url, db))
  await measure('MongoDB KEYS_MONGO_DB', a, b)
  await a.close()
  await b.close()
} finally {
  await dropMongoDatabase(url, db)
}
