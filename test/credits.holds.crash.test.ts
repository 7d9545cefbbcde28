// Issue 11 item 10: the service killed (SIGKILL, a real process) between reserving an import's
// credits and creating its note leaves a hold with no note. The auditor reports it once the lease
// has passed; the restarted service's hold sweeper releases it by an event; then the balance is
// what a replay of the ledger gives and the auditor says OK.
import t from 'tap'
import { once } from 'node:events'
import { join } from 'node:path'
import { tempDir } from './support/tmp.ts'
import { freePorts } from './support/mcp.ts'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import type { CreditEvent } from '../domain/credits/ledger.ts'
import { noteStream } from '../domain/notes/note.ts'
import { embeddedEnv } from './support/embeddedEnv.ts'
import { startServiceChild } from './support/serviceChild.ts'
import { auditAccount, creditEventsIn } from './support/ledger.ts'
import { pollUntil } from './support/pollUntil.ts'

const tmp = tempDir('holds-crash-')
t.teardown(tmp.remove)
const [port, mcpPort] = await freePorts(2)
// The embedded default whatever servers `npm test` started: a killed process's MongoDB projection
// leases would otherwise hold the restarted one's projections back.
const inherited = embeddedEnv()
const env = {
  DATA_DIR: tmp.dir,
  PORT: String(port),
  MCP_PORT: String(mcpPort),
  IMPORT_ALLOW_HOSTS: '127.0.0.1',
  CREDIT_HOLD_LEASE_SECONDS: '1',
  CREDIT_HOLD_SWEEP_MS: '100',
  DIARIZATION: 'off',
  JOB_POLL_MS: '200',
}

const startService = (extra: Record<string, string> = {}) => startServiceChild(t, { ...inherited, ...env, ...extra })

const events = openSqliteEventStore({ path: join(tmp.dir, 'events.db') })
t.teardown(() => events.close())
const ledger = (accountId: string) => creditEventsIn(events, accountId)
const audit = (accountId: string) => auditAccount(accountId, { ...inherited, ...env })

t.test('given the service killed between the import hold and the note, when it restarts, then the sweeper releases the hold and the auditor agrees', async (t) => {
  const first = await startService({ FAULT_INJECT: 'crash-after-import-reserve' })
  const { accountId, apiKey, baseUrl } = first.ready as { accountId: string; apiKey: string; baseUrl: string }
  if (!accountId || !apiKey) throw new Error('the service gave no demo account')
  const exited = once(first.child, 'exit')
  const answer = await fetch(`${baseUrl}/v1/notes`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ audioUrl: 'http://127.0.0.1:9/talk.mp3' }),
  }).then(
    (r) => `answered ${r.status}`,
    () => 'no answer',
  )
  const [, signal] = await Promise.race([exited, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the service did not die: ${answer}`)), 20_000))])
  t.equal(signal, 'SIGKILL', 'the service died by SIGKILL at the fault point')
  t.equal(answer, 'no answer')

  const after = await ledger(accountId)
  const hold = after.at(-1)
  t.match(hold, { type: 'CreditsReserved', data: { operation: 'import', amount: 50, balanceAfter: 4950 } }, 'the hold was written')
  const { reservationId, noteId, at } = (hold as Extract<CreditEvent, { type: 'CreditsReserved' }>).data
  t.equal((await events.readStream(noteStream.of(noteId!))).streamExists, false, 'and its note never was')

  // While the service is down and the lease has passed, the auditor names the orphaned hold.
  await pollUntil('the lease to pass', async () => Date.now() > Date.parse(at) + 1100, 30_000)
  const down = audit(accountId)
  t.equal(down.status, 1, 'the auditor exits 1')
  t.match(down.result.orphanHolds, [{ reservationId }])
  t.ok(down.result.problems.some((p) => p.includes(reservationId) && /owner never appeared/.test(p)), 'and says why')

  // Restarted without the fault: the sweeper gives the hold back by an event.
  const second = await startService()
  // A restart on a busy machine: boot, catch-up and the sweeper's first pass may take a while.
  const released = await pollUntil('the hold to be released', async () =>
    (await ledger(accountId)).find((e): e is Extract<CreditEvent, { type: 'CreditsReleased' }> => e.type === 'CreditsReleased' && e.data.reservationId === reservationId),
  120_000)
  t.match(released.data, { amount: 50, balanceAfter: 5000, reason: /hold sweeper/ })
  const ok = await pollUntil('the auditor to agree', async () => {
    const a = audit(accountId)
    return a.status === 0 ? a : null
  }, 30_000)
  t.same({ ok: ok.result.ok, balance: ok.result.balance, orphanHolds: ok.result.orphanHolds, problems: ok.result.problems }, { ok: true, balance: 5000, orphanHolds: [], problems: [] })
  t.equal((await ledger(accountId)).filter((e) => e.type === 'CreditsReleased').length, 1, 'released once')
  second.child.kill('SIGTERM')
  await once(second.child, 'exit')
})
