// A process that pays for an operation which then fails (CreditCommands.chargedOperation), with
// the FAULT_INJECT points of the charge/refund path: test/credits.refunds.crash.test.ts kills it
// there (SIGKILL) and checks that the refund process manager still ends with exactly one refund.
//   DATA_DIR=... ACCOUNT=... CHARGE_OP_OUTCOME=fail|ok FAULT_INJECT=<point> tsx test/support/chargedOperationProcess.ts
import { join } from 'node:path'
import { openSqliteEventStore } from '../../adapters/sqlite/eventStore.ts'
import { CommandHandler } from '../../commands/handleCommand.ts'
import { CreditCommands } from '../../commands/credits.ts'
import { PRICES } from '../../domain/credits/prices.ts'

const faults = new Set((process.env.FAULT_INJECT ?? '').split(',').filter(Boolean))
const events = openSqliteEventStore({ path: join(process.env.DATA_DIR!, 'events.db') })
const credits = new CreditCommands(new CommandHandler(events), () => new Date(), {
  leaseMs: 60_000,
  fault: (point) => {
    if (faults.has(point)) process.kill(process.pid, 'SIGKILL')
  },
})
const account = process.env.ACCOUNT!
await credits.open(account, 'pro')
try {
  await credits.chargedOperation(account, { operation: PRICES.clip.operation, cost: PRICES.clip.credits }, async () => {
    if (process.env.CHARGE_OP_OUTCOME === 'ok') return 'done'
    throw new Error('the clip could not be cut')
  })
  console.log('completed')
} catch (err) {
  console.log(`failed: ${(err as Error).message}`)
}
await events.close()
