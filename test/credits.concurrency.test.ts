import t from 'tap'
import { embeddedWorld } from './support/world.ts'
import { DomainError } from '../domain/errors.ts'
import { creditAccount } from '../readmodels/ledger.ts'

t.test('given a balance of 1000, when 200 charges of 10 run concurrently, then exactly 100 succeed', async (t) => {
  const w = await embeddedWorld()
  t.teardown(w.close)
  await w.credits.open('acc-1', 'personal')
  const results = await Promise.allSettled(Array.from({ length: 200 }, (_, i) => w.credits.charge('acc-1', { operation: 'ask', cost: 10, requestId: `req-${i}` })))
  const ok = results.filter((r) => r.status === 'fulfilled')
  const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
  t.equal(ok.length, 100)
  t.equal(refused.length, 100)
  t.ok(refused.every((r) => r.reason instanceof DomainError && r.reason.code === 'insufficient_credits'), 'every refusal is insufficient_credits')
  const { state } = await w.credits.state('acc-1')
  t.equal(state.balance, 0)
  const last = (await w.events.readStream('credits-acc-1')).currentRevision
  const pos = (await w.events.readAll({ maxCount: 1_000_000 })).at(-1)!.globalPosition
  await w.ledger.waitFor(pos)
  t.match(await creditAccount(w.docs, 'acc-1'), { balance: 0, revision: last })
})

t.test('given two command handlers on the same file (two processes), charges never overdraw', async (t) => {
  const w = await embeddedWorld()
  t.teardown(w.close)
  const { openSqliteEventStore } = await import('../adapters/sqlite/eventStore.ts')
  const { CommandHandler } = await import('../commands/handleCommand.ts')
  const { CreditCommands } = await import('../commands/credits.ts')
  const { join } = await import('node:path')
  const other = openSqliteEventStore({ path: join(w.dir, 'events.db') })
  t.teardown(() => other.close())
  const second = new CreditCommands(new CommandHandler(other, { maxRetries: 50 }))
  const first = new CreditCommands(new CommandHandler(w.events, { maxRetries: 50 }))
  await first.open('acc-2', 'free')
  const results = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => (i % 2 ? first : second).charge('acc-2', { operation: 'ask', cost: 10 })))
  t.equal(results.filter((r) => r.status === 'fulfilled').length, 20)
  t.equal((await first.state('acc-2')).state.balance, 0)
})

t.test('a failing charged operation is refunded by an event', async (t) => {
  const w = await embeddedWorld()
  t.teardown(w.close)
  await w.credits.open('acc-3', 'free')
  await t.rejects(w.credits.chargedOperation('acc-3', { operation: 'ask', cost: 10, noteId: 'n1' }, async () => { throw new Error('model down') }), /model down/)
  const types = (await w.events.readStream('credits-acc-3')).events.map((e) => e.type)
  // The failure is an event; the refund process manager refunds from it (issue 14, item 3).
  t.same(types, ['CreditAccountOpened', 'CreditCycleStarted', 'CreditsCharged', 'CreditsChargeFailed', 'CreditsRefunded'])
  t.equal((await w.credits.state('acc-3')).state.balance, 200)
})
