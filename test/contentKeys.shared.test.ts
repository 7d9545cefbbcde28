// The key store roles on several hosts share (adapters/documentStore/contentKeys.ts, MongoDB;
// FerretDB here) and the shared signing secrets (app/sharedSecrets.ts): the same rules as the
// one-host SQLite key file, across two independent connections, as two processes would hold them.
// MONGO_URL unset: nothing to run here; say so and pass.
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from './support/tmp.ts'
import { pollUntil } from './support/pollUntil.ts'
import { documentContentKeys, importContentKeys, CONTENT_KEYS_COLLECTION } from '../adapters/documentStore/contentKeys.ts'
import { documentSecrets, withSharedSecrets } from '../app/sharedSecrets.ts'
import { openSqliteContentKeys, readSqliteContentKeys } from '../adapters/sqlite/contentKeys.ts'
import { loadConfig } from '../app/config.ts'
import type { DocumentStore } from '../ports/documentStore.ts'

const mongoUrl = process.env.MONGO_URL

/** Two connections to one fresh database, as two processes would have; dropped at teardown. */
async function twoConnections(t: Test, url: string): Promise<[DocumentStore, DocumentStore, () => Promise<DocumentStore>]> {
  const { openMongoDocumentStore, dropMongoDatabase } = await import('../adapters/mongodb/documentStore.ts')
  const db = `test_keys_${randomUUID().replace(/-/g, '').slice(0, 10)}`
  const open = () => openMongoDocumentStore(url, db)
  const a = await open()
  const b = await open()
  t.teardown(() => dropMongoDatabase(url, db))
  return [a, b, open]
}

const hex = (k: { kind: string; key?: Buffer }) => (k.kind === 'key' ? k.key!.toString('hex') : k.kind)

if (!mongoUrl) {
  t.comment('MONGO_URL is not set: the shared key store tests need MongoDB (npm test starts FerretDB)')
} else {
  t.test('given two processes on one key store, then ids are issued once, a first key is agreed, and a shred is seen by both', async (t) => {
    const [storeA, storeB, open] = await twoConnections(t, mongoUrl)
    const a = documentContentKeys(storeA)
    const b = documentContentKeys(storeB)
    const ids: string[] = []
    for (let i = 0; i < 300; i++) ids.push(await a.issueId(), await b.issueId())
    t.equal(new Set(ids).size, 600, 'no id is handed out twice, across both')
    const issuedByA = ids[0]!
    const onA = await a.key(issuedByA, { create: true })
    t.equal(hex(await b.key(issuedByA, { create: false })), hex(onA), 'b reads the key a issued with its id')

    // Both create the first key of one id at once: one wins, both read it.
    const id = randomUUID()
    const [ka, kb] = await Promise.all([a.key(id, { create: true }), b.key(id, { create: true })])
    t.equal(ka.kind, 'key')
    t.equal(hex(ka), hex(kb), 'both processes seal under the one stored key')

    await b.shred(id)
    t.equal((await a.key(id, { create: true })).kind, 'shredded', 'a sees the shred and makes no new key')
    t.equal((await b.key(issuedByA, { create: false })).kind, 'key', 'other keys stay')

    await a.close()
    await b.close()
    const check = await open()
    const left = await check.collection(CONTENT_KEYS_COLLECTION).countDocuments()
    await check.close()
    // 600 handed out, plus `id`'s tombstone; the keys made ahead and never handed out left with their stores.
    t.equal(left, 601, 'closing takes the unused keys made ahead with it')
  })

  t.test('given keys fetched with their batch by a reader, when one is shredded, then no reader opens it past the cache bound, and none fetches it again', async (t) => {
    const [storeA, storeB, open] = await twoConnections(t, mongoUrl)
    const writer = documentContentKeys(storeA)
    const reader = documentContentKeys(storeB)
    const [x, y] = [await writer.issueId(), await writer.issueId()]
    t.equal((await reader.key(x, { create: false })).kind, 'key', 'the reader fetches x, and its batch with it')
    t.equal((await reader.key(y, { create: false })).kind, 'key', 'y, from the batch')
    await writer.shred(y)
    const later = documentContentKeys(await open())
    t.equal((await later.key(x, { create: false })).kind, 'key')
    t.equal((await later.key(y, { create: false })).kind, 'shredded', 'a reader fetching the batch after the shred never sees the key')
    await pollUntil('the first reader sees the shred', async () => (await reader.key(y, { create: false })).kind === 'shredded', 3000)
    t.equal((await reader.key(y, { create: true })).kind, 'shredded', 'and sealing never used the prefetched key')
    await Promise.all([writer.close(), reader.close(), later.close()])
  })

  t.test('given a keys file from a one-host install, when it is carried into the key store, then its keys open as before and its tombstones win, once', async (t) => {
    const [store, other] = await twoConnections(t, mongoUrl)
    await other.close()
    const tmp = tempDir()
    t.teardown(tmp.remove)
    const file = join(tmp.dir, 'keys.db')
    const old = openSqliteContentKeys({ path: file })
    const kept = randomUUID()
    const gone = randomUUID()
    const keptKey = hex(await old.key(kept, { create: true }))
    await old.key(gone, { create: true })
    await old.shred(gone)
    await old.close()

    // The shared store had made a key for `gone` meanwhile (a process that never heard of the deletion).
    const shared = documentContentKeys(store)
    await shared.key(gone, { create: true })
    t.equal(await importContentKeys(store, 'keys.db:test', () => readSqliteContentKeys(file)), 2, 'both rows carried')
    t.equal(hex(await shared.key(kept, { create: false })), keptKey, 'the old key opens the old notes')
    t.equal((await shared.key(gone, { create: true })).kind, 'shredded', 'a destroyed key stays destroyed')
    t.equal(await importContentKeys(store, 'keys.db:test', () => { throw new Error('read again') }), null, 'a later start does not read the file again')
    await shared.close()
  })

  t.test('given two processes starting together, then they agree on each signing secret; the environment wins; an old secret file is carried over', async (t) => {
    const [storeA, storeB] = await twoConnections(t, mongoUrl)
    t.teardown(async () => {
      await storeA.close()
      await storeB.close()
    })
    const tmp = tempDir()
    t.teardown(tmp.remove)
    writeFileSync(join(tmp.dir, 'webhook-signing.key'), 'the-old-webhook-key\n')
    const a = documentSecrets(storeA, tmp.dir)
    const b = documentSecrets(storeB, null)
    const [ua, ub] = await Promise.all([a.secret('upload'), b.secret('upload')])
    t.equal(ua, ub, 'one upload secret for both')
    t.ok(ua.length >= 43, 'a random 256-bit secret')
    t.equal(await a.secret('webhook'), 'the-old-webhook-key', 'the key that sealed webhook secrets before is kept')
    t.equal(await b.secret('webhook'), 'the-old-webhook-key', 'and shared')

    const config = await withSharedSecrets(loadConfig({ DATA_DIR: tmp.dir, DASHBOARD_SIGNING_SECRET: 'from-env' }), b)
    t.equal(config.dashboard.signingSecret, 'from-env', 'a secret set in the environment wins')
    t.equal(config.uploadSigningSecret, ua)
    t.equal(config.webhooks.secretKey, 'the-old-webhook-key')
    t.equal(config.oauthSigningSecret, await a.secret('oauth'))
  })
}
