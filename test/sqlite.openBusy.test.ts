// Start-up race (issue 31, item 4): four roles opening one SQLite file at once crashed two of
// them with SQLITE_BUSY_RECOVERY, because `PRAGMA journal_mode = WAL` ran before
// `busy_timeout`: switching the journal mode needs a lock, and without a timeout a connection
// that meets another's lock fails at once instead of waiting for it.
import t from 'tap'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { once } from 'node:events'
import Database from 'libsql'
import { openSqlite } from '../adapters/sqlite/database.ts'
import { tempDir } from './support/tmp.ts'

t.test('given another process holds the write lock of a database, when one opens it, then the open waits for the lock instead of failing', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const path = join(tmp.dir, 'shared.db')
  // A database still in the rollback journal, as a fresh file is before its first open.
  const seed = new Database(path)
  seed.exec('CREATE TABLE x (v INTEGER)')
  seed.close()
  // The other process takes an exclusive lock and lets it go after 700 ms.
  const holder = spawn(process.execPath, ['-e', `
    const Database = require('libsql')
    const db = new Database(${JSON.stringify(path)})
    db.exec('BEGIN EXCLUSIVE')
    db.exec('INSERT INTO x VALUES (1)')
    process.stdout.write('locked\\n')
    setTimeout(() => { db.exec('COMMIT'); db.close(); process.exit(0) }, 700)
  `], { stdio: ['ignore', 'pipe', 'inherit'], cwd: process.cwd() })
  t.teardown(() => void holder.kill('SIGKILL'))
  let out = ''
  holder.stdout!.on('data', (d) => (out += d))
  const deadline = Date.now() + 20_000
  while (!out.includes('locked') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  t.ok(out.includes('locked'), 'the other process holds the lock')

  let db: ReturnType<typeof openSqlite> | undefined
  t.doesNotThrow(() => (db = openSqlite(path, { synchronous: 'NORMAL' })), 'opened while the lock was held')
  t.equal((db?.prepare('PRAGMA journal_mode').get() as { journal_mode?: string } | undefined)?.journal_mode, 'wal', 'and in WAL mode')
  t.equal((db?.prepare('SELECT count(*) AS n FROM x').get() as { n?: number } | undefined)?.n, 1, 'it saw the other process’s commit')
  db?.close()
  await once(holder, 'exit')
})
