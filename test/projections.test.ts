import t from 'tap'
import { join } from 'node:path'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { openEmbeddedDocumentStore } from '../adapters/embedded/documentStore.ts'
import { CommandHandler } from '../commands/handleCommand.ts'
import { CreditCommands } from '../commands/credits.ts'
import { rebuildProjection, startProjection, readCheckpoint } from '../projections/runner.ts'
import { CREDIT_ACCOUNTS, LEDGER_ENTRIES, ledgerProjection } from '../projections/ledger.ts'
import { embeddedWorld } from './support/world.ts'
import { tempDir } from './support/tmp.ts'
import type { DocumentStore } from '../ports/documentStore.ts'

const run = promisify(execFile)

async function seedLedgers(credits: CreditCommands, accounts: number, charges: number) {
  for (let a = 0; a < accounts; a++) {
    await credits.open(`acc-${a}`, 'power')
    for (let i = 0; i < charges; i++) {
      const { chargeId } = await credits.charge(`acc-${a}`, { operation: 'transcript', cost: 1 + (i % 7), noteId: `n${i % 3}` })
      if (i % 5 === 0) await credits.refund(`acc-${a}`, chargeId, 'test refund')
    }
  }
}

const snapshot = async (docs: DocumentStore) => ({
  entries: await docs.collection(LEDGER_ENTRIES).find({}, { sort: { _id: 1 } }),
  accounts: await docs.collection(CREDIT_ACCOUNTS).find({}, { sort: { _id: 1 } }),
})

t.test('given a projection stopped mid-stream, when it restarts, then its read model equals a rebuild from zero', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const events = openSqliteEventStore({ path: join(tmp.dir, 'events.db') })
  const credits = new CreditCommands(new CommandHandler(events))
  await seedLedgers(credits, 4, 60)
  const total = (await events.readAll({ maxCount: 1e6 })).length

  const docsPath = join(tmp.dir, 'readmodels.db')
  let docs = openEmbeddedDocumentStore({ path: docsPath })
  const first = startProjection(ledgerProjection, { events, docs, batchSize: 16, stopAfter: 101 })
  await first.done
  const stoppedAt = await readCheckpoint(docs, ledgerProjection.name)
  t.ok(stoppedAt > 0 && stoppedAt < total, `stopped mid-stream (checkpoint ${stoppedAt} of ${total})`)
  // Simulate a crash after the read model was written but before the checkpoint: move the
  // checkpoint back, so the restart re-applies events that are already in the read model.
  await docs.collection('_checkpoints').updateOne({ _id: ledgerProjection.name }, { $set: { position: stoppedAt - 40 } })
  await docs.close()

  docs = openEmbeddedDocumentStore({ path: docsPath })
  const resumed = startProjection(ledgerProjection, { events, docs })
  await resumed.waitFor(total)
  await resumed.stop()
  const afterResume = await snapshot(docs)

  const rebuilt = await rebuildProjection(ledgerProjection, { events, docs })
  t.equal(rebuilt, total, 'rebuild replays every credit event')
  const afterRebuild = await snapshot(docs)
  t.equal(afterResume.entries.length, total - 4, 'one line per event except the account openings')
  t.same(afterResume, afterRebuild, 'resumed read model is identical to the rebuild')
  await docs.close()
  await events.close()
})

t.test('the auditor agrees with an intact read model and exits non-zero when it is tampered with', async (t) => {
  const w = await embeddedWorld()
  t.teardown(w.close)
  await seedLedgers(w.credits, 1, 12)
  const { reservationId } = await w.credits.reserve('acc-0', { operation: 'import', amount: 50, noteId: 'n9' })
  await w.credits.capture('acc-0', reservationId, 150)
  const head = (await w.events.readAll({ maxCount: 1e6 })).at(-1)!.globalPosition
  await w.ledger.waitFor(head)
  await w.ledger.stop()
  await w.docs.close()

  const audit = () =>
    run('npx', ['tsx', 'scripts/audit-ledger.ts', 'acc-0'], { env: { ...process.env, DATA_DIR: w.dir, ESDB_URL: '', MONGO_URL: '' } }).then(
      (r) => ({ code: 0, out: r.stdout }),
      (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
    )
  const clean = await audit()
  t.equal(clean.code, 0, 'exit 0 on agreement')
  t.match(clean.out, /VERDICT: OK/)
  t.match(clean.out, /CreditsCaptured\s+import\s+-100/)

  const docs = openEmbeddedDocumentStore({ path: join(w.dir, 'readmodels.db') })
  const line = await docs.collection(LEDGER_ENTRIES).findOne({ accountId: 'acc-0', type: 'CreditsCharged' }, { sort: { revision: -1 } })
  await docs.collection(LEDGER_ENTRIES).updateOne({ _id: line!._id }, { $inc: { delta: 1, balanceAfter: 1 } })
  await docs.collection(CREDIT_ACCOUNTS).updateOne({ _id: 'acc-0' }, { $inc: { balance: 5 } })
  await docs.close()
  const tampered = await audit()
  t.equal(tampered.code, 1, 'exit 1 on a mismatch')
  t.match(tampered.out, /MISMATCH: read model line r\d+ says delta/)
  t.match(tampered.out, /MISMATCH: read model balance/)
  t.match(tampered.out, /VERDICT: MISMATCH/)
})
