// Idempotent commands under cross-process contention (issue 13, finding 4): 3 processes × 150
// concurrent charges on one account end with 0 errors and the exact balance (the read side's
// fold equals a replay of the stream); the same requests retried change nothing; a conflict that
// outlasts the deadline is a 503 service_unavailable, never a 500.
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import { openEsdbEventStore } from '../adapters/esdb/eventStore.ts'
import { CommandHandler } from '../commands/handleCommand.ts'
import { CreditCommands } from '../commands/credits.ts'
import { creditsStream, ledgerDecider } from '../domain/credits/ledger.ts'
import { DomainError } from '../domain/errors.ts'
import { WrongExpectedRevisionError, toDomainEvent, type EventStore } from '../ports/eventStore.ts'
import { startEsdbTestServer } from './support/esdbTestServer.ts'
import { tempDir } from './support/tmp.ts'

const PROCESSES = 3
const PER_PROCESS = 150
const COST = 2

function chargeProcess(env: Record<string, string>): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'support', 'chargeProcess.ts')], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1)!)) : reject(new Error(`charge process exited ${code}`))))
  })
}

async function replayBalance(events: EventStore, accountId: string): Promise<{ balance: number; charges: number }> {
  const read = await events.readStream(creditsStream.of(accountId))
  let state = ledgerDecider.initialState()
  for (const e of read.events) state = ledgerDecider.evolve(state, toDomainEvent(e))
  return { balance: (state as { balance: number }).balance, charges: read.events.filter((e) => e.type === 'CreditsCharged').length }
}

async function contention(t: Test, store: string, events: EventStore, accountId: string) {
  const credits = new CreditCommands(new CommandHandler(events))
  await credits.open(accountId, 'personal')
  const start = (await credits.state(accountId)).state.balance
  const runs = await Promise.all(Array.from({ length: PROCESSES }, (_, p) => chargeProcess({ EVENTS: store, ACCOUNT: accountId, COUNT: String(PER_PROCESS), PREFIX: `p${p}`, COST: String(COST) })))
  const total: Record<string, number> = {}
  for (const r of runs) for (const [k, v] of Object.entries(r)) total[k] = (total[k] ?? 0) + v
  t.same(total, { ok: PROCESSES * PER_PROCESS }, '0 errors in 450 concurrent charges')
  const replay = await replayBalance(events, accountId)
  t.same(replay, { balance: start - PROCESSES * PER_PROCESS * COST, charges: PROCESSES * PER_PROCESS }, 'exact balance, equal to a replay of the stream')

  // The same requests again (a client retrying after a timeout): nothing is charged twice.
  const again = await chargeProcess({ EVENTS: store, ACCOUNT: accountId, COUNT: String(PER_PROCESS), PREFIX: 'p0', COST: String(COST) })
  t.same(again, { ok: PER_PROCESS }, 'retries answer ok')
  t.same(await replayBalance(events, accountId), replay, 'and apply once')
}

t.test('SQLite shared file: 3 processes × 150 concurrent charges on one account', async (t) => {
  const tmp = tempDir()
  const path = join(tmp.dir, 'events.db')
  const events = openSqliteEventStore({ path })
  t.teardown(async () => (await events.close(), tmp.remove()))
  await contention(t, path, events, 'acc-busy')
})

t.test('EventStoreDB (protocol test server): 3 processes × 150 concurrent charges on one account', async (t) => {
  const server = await startEsdbTestServer()
  const events = openEsdbEventStore(server.connectionString)
  t.teardown(async () => (await events.close(), await server.stop()))
  await contention(t, server.connectionString, events, 'acc-busy-esdb')
})

t.test('a conflict that outlasts the deadline is 503 service_unavailable with a Retry-After, never a 500', async (t) => {
  const tmp = tempDir()
  const events = openSqliteEventStore({ path: join(tmp.dir, 'events.db') })
  t.teardown(async () => (await events.close(), tmp.remove()))
  const credits = new CreditCommands(new CommandHandler(events))
  await credits.open('acc-c', 'personal')
  // Another writer always wins: every append conflicts.
  const always: EventStore = { ...events, appendToStream: async (s) => Promise.reject(new WrongExpectedRevisionError(s, 0, 1)), readStream: events.readStream.bind(events) }
  const busy = new CreditCommands(new CommandHandler(always, { conflictDeadlineMs: 200 }))
  const err = await busy.charge('acc-c', { operation: 'ask', cost: 1, requestId: 'r1' }).catch((e) => e)
  t.ok(err instanceof DomainError)
  t.same([err.code, err.extra.retryAfter], ['service_unavailable', 1])
})
