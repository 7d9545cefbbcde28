// Content keys made ahead (issue 13, the scale benchmark): a new note's id comes with its key
// already durable, so its create waits on one durable write (its event's), not two in a row.
// Ids are handed out once, never collide across processes sharing keys.db, and a store that
// closes takes the ids it never handed out with it.
import t from 'tap'
import { join } from 'node:path'
import Database from 'libsql'
import { tempDir } from './support/tmp.ts'
import { testService } from './support/service.ts'
import { openSqliteContentKeys } from '../adapters/sqlite/contentKeys.ts'
import type { EventStore } from '../ports/eventStore.ts'

const storedKey = (path: string, id: string): string | null => {
  const db = new Database(path, { readonly: true })
  try {
    const row = db.prepare('SELECT key FROM content_keys WHERE id = ?').get(id) as { key: Buffer | null } | undefined
    return row?.key ? Buffer.from(row.key).toString('hex') : null
  } finally {
    db.close()
  }
}
const rowCount = (path: string): number => {
  const db = new Database(path, { readonly: true })
  try {
    return (db.prepare('SELECT count(*) AS n FROM content_keys').get() as { n: number }).n
  } finally {
    db.close()
  }
}

t.test('given two key stores on one file, when 600 ids are issued by each, then every id is new and its key was stored before it was handed out', async (t) => {
  const tmp = tempDir('keys-issued-')
  t.teardown(tmp.remove)
  const path = join(tmp.dir, 'keys.db')
  const a = openSqliteContentKeys({ path })
  const b = openSqliteContentKeys({ path })
  const ids: string[] = []
  let unstored = 0
  for (let i = 0; i < 600; i++) {
    for (const store of [a, b]) {
      const id = await store.issueId()
      // Read through a connection of its own, as another process would, before anyone asks for the key.
      if (storedKey(path, id) === null) unstored++
      ids.push(id)
    }
  }
  t.equal(unstored, 0, 'no id is handed out before its key is durable')
  t.equal(new Set(ids).size, 1200, 'no id is handed out twice, across both stores')
  const first = ids[0]!
  const k = await a.key(first, { create: true })
  t.equal(k.kind === 'key' ? k.key.toString('hex') : k.kind, storedKey(path, first), 'the key handed out is the stored one')
  const again = await a.key(first, { create: false })
  t.equal(again.kind === 'key' ? again.key.toString('hex') : again.kind, storedKey(path, first), 'and it reads back the same from the file')
  await a.close()
  await b.close()
  t.equal(rowCount(path), 1200, 'the ids made ahead and never handed out left with their stores')
})

t.test('given an issued id, when it is shredded before its first event, then no content can be sealed under it', async (t) => {
  const tmp = tempDir('keys-issued-')
  t.teardown(tmp.remove)
  const keys = openSqliteContentKeys({ path: join(tmp.dir, 'keys.db') })
  t.teardown(() => keys.close())
  const id = await keys.issueId()
  await keys.shred(id)
  t.equal((await keys.key(id, { create: true })).kind, 'shredded')
})

t.test('given the service, when notes are created, then each note key is stored before its first event is appended (one durable write on the request path)', async (t) => {
  let seen = 0
  let keyMissing = 0
  let svcDir = ''
  // Sits outside the sealing store: it sees the append before the note is sealed under its key.
  const wrapEvents = (inner: EventStore): EventStore => ({
    ...inner,
    async appendToStream(stream, events, options) {
      if (events.some((e) => e.type === 'NoteCreated')) {
        seen++
        if (storedKey(join(svcDir, 'keys.db'), stream.slice('note-'.length)) === null) keyMissing++
      }
      return inner.appendToStream(stream, events, options)
    },
  })
  const svc = await testService({ wrapEvents })
  svcDir = svc.dir
  t.teardown(() => svc.close())
  const { headers } = await svc.account('pro')
  const creates = await Promise.all(
    Array.from({ length: 40 }, (_, i) => svc.inject({ method: 'POST', url: '/v1/notes', headers, payload: { filename: `m${i}.wav`, contentType: 'audio/wav', fileSizeBytes: 1000 } })),
  )
  t.same(new Set(creates.map((r) => r.statusCode)), new Set([202]))
  t.equal(seen, 40)
  t.equal(keyMissing, 0, 'no create had to make its key on the way')
  const imported = await svc.inject({ method: 'POST', url: '/v1/notes', headers, payload: { audioUrl: 'https://podcasts.example.org/e1.mp3' } })
  t.equal(imported.statusCode, 202, imported.body)
  t.equal(keyMissing, 0, 'nor an import')
  const noteId = imported.json().noteId as string
  const read = await svc.inject({ method: 'GET', url: `/v1/notes/${noteId}`, headers })
  t.equal(read.statusCode, 200, 'the note reads back through its key')
})

t.test('given refused creates, then they take no id: the keys made ahead are not used up', async (t) => {
  const svc = await testService()
  t.teardown(() => svc.close())
  const { headers } = await svc.account('pro')
  const ok = await svc.inject({ method: 'POST', url: '/v1/notes', headers, payload: { filename: 'a.wav', contentType: 'audio/wav', fileSizeBytes: 1000 } })
  t.equal(ok.statusCode, 202)
  const path = join(svc.dir, 'keys.db')
  const before = rowCount(path)
  for (let i = 0; i < 300; i++) {
    const r = await svc.inject({ method: 'POST', url: '/v1/notes', headers, payload: { filename: 'a.txt', contentType: 'text/plain', fileSizeBytes: 1000 } })
    if (r.statusCode !== 415) t.fail(`a refused create answered ${r.statusCode}`)
  }
  t.equal(rowCount(path), before, 'no refill: 300 refused creates took no id')
})
