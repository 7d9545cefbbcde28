// The one-host key file (DATA_DIR/keys.db) is shared by the roles of one host. A role that holds
// its write lock past the busy timeout leaves the others' key writes unanswered: that is the
// store not answering (503 with Retry-After at the edge), never a raw SQLite error (a 500).
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { openSqliteContentKeys } from '../adapters/sqlite/contentKeys.ts'
import { openSqlite } from '../adapters/sqlite/database.ts'
import { DocumentStoreUnavailableError } from '../ports/documentStore.ts'
import { tempDir } from './support/tmp.ts'

t.test('given another process holds the key file\'s write lock past the busy timeout, when a role issues an id, creates a key or shreds one, then each fails as the store not answering, and each succeeds once the lock is free', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const path = join(tmp.dir, 'keys.db')
  const keys = openSqliteContentKeys({ path, busyTimeoutMs: 200 })
  t.teardown(() => keys.close())
  const other = openSqlite(path, { synchronous: 'NORMAL' })
  t.teardown(() => other.close())
  const id = randomUUID()

  other.exec('BEGIN IMMEDIATE')
  const outcome = (p: Promise<unknown>) => p.then(() => null, (err: unknown) => err)
  for (const [what, err] of [
    ['issueId', await outcome(keys.issueId())],
    ['key (create)', await outcome(keys.key(id, { create: true }))],
    ['shred', await outcome(keys.shred(randomUUID()))],
  ] as const) {
    t.type(err, DocumentStoreUnavailableError, `${what}: the store did not answer`)
  }
  other.exec('COMMIT')

  t.type(await keys.issueId(), 'string', 'an id is issued')
  const made = await keys.key(id, { create: true })
  t.equal(made.kind, 'key', 'the key is made')
  t.same(await keys.key(id, { create: false }), made, 'and stored once')
})
