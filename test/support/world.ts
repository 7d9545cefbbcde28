// A complete embedded back end in a temp directory: event store, read models, command handler,
// the credit ledger projection running.
import { join } from 'node:path'
import { openSqliteEventStore } from '../../adapters/sqlite/eventStore.ts'
import { openEmbeddedDocumentStore } from '../../adapters/embedded/documentStore.ts'
import { CommandHandler } from '../../commands/handleCommand.ts'
import { CreditCommands } from '../../commands/credits.ts'
import { startProjection } from '../../projections/runner.ts'
import { ledgerProjection } from '../../projections/ledger.ts'
import { tempDir } from './tmp.ts'

export async function embeddedWorld() {
  const tmp = tempDir()
  const events = openSqliteEventStore({ path: join(tmp.dir, 'events.db') })
  const docs = openEmbeddedDocumentStore({ path: join(tmp.dir, 'readmodels.db') })
  const handler = new CommandHandler(events)
  const credits = new CreditCommands(handler)
  const ledger = startProjection(ledgerProjection, { events, docs })
  return {
    dir: tmp.dir,
    events,
    docs,
    handler,
    credits,
    ledger,
    async close() {
      await ledger.stop()
      await events.close()
      await docs.close()
      tmp.remove()
    },
  }
}
