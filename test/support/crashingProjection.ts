// Child process for test/projections.test.ts: runs the ledger projection over DATA_DIR's event
// store into its embedded read models and kills itself (SIGKILL: no cleanup, no pending write
// flushed) in the middle of batch number CRASH_IN_BATCH, after the batch's read-model writes and
// before its checkpoint.
//
//   node --import tsx test/support/crashingProjection.ts <dataDir> <crashInBatch> <batchSize>
import { join } from 'node:path'
import { openSqliteEventStore } from '../../adapters/sqlite/eventStore.ts'
import { openEmbeddedDocumentStore } from '../../adapters/embedded/documentStore.ts'
import { startProjection, type Projection } from '../../projections/runner.ts'
import { ledgerProjection } from '../../projections/ledger.ts'

const [dir, crashIn, size] = process.argv.slice(2)
if (!dir || !crashIn || !size) throw new Error('usage: crashingProjection.ts <dataDir> <crashInBatch> <batchSize>')
const events = openSqliteEventStore({ path: join(dir, 'events.db') })
const docs = openEmbeddedDocumentStore({ path: join(dir, 'readmodels.db') })
let batches = 0
const crashing: Projection = {
  ...ledgerProjection,
  async handle(batch, tx) {
    await ledgerProjection.handle(batch, tx)
    if (++batches === Number(crashIn)) process.kill(process.pid, 'SIGKILL')
  },
}
startProjection(crashing, { events, docs, batchSize: Number(size) })
