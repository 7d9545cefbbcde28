// One API-like process charging one account concurrently on a shared event store (SQLite file or
// an EventStoreDB URL), for the cross-process idempotency test. Prints one JSON line of outcomes.
import { openSqliteEventStore } from '../../adapters/sqlite/eventStore.ts'
import { openEsdbEventStore } from '../../adapters/esdb/eventStore.ts'
import { CommandHandler } from '../../commands/handleCommand.ts'
import { CreditCommands } from '../../commands/credits.ts'
import { DomainError } from '../../domain/errors.ts'

const { EVENTS, ACCOUNT, COUNT, PREFIX, COST } = process.env as Record<string, string>
const events = EVENTS!.startsWith('esdb://') ? openEsdbEventStore(EVENTS!) : openSqliteEventStore({ path: EVENTS! })
const credits = new CreditCommands(new CommandHandler(events))
const results = await Promise.allSettled(
  Array.from({ length: Number(COUNT) }, (_, i) => credits.charge(ACCOUNT!, { operation: 'ask', cost: Number(COST), requestId: `${PREFIX}-${i}` })),
)
const outcomes: Record<string, number> = {}
for (const r of results) {
  const k = r.status === 'fulfilled' ? 'ok' : r.reason instanceof DomainError ? r.reason.code : `internal: ${String(r.reason)}`
  outcomes[k] = (outcomes[k] ?? 0) + 1
}
console.log(JSON.stringify(outcomes))
await events.close()
