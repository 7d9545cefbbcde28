// Issue 14, item 3, over HTTP: the whole service (test/support/serviceProcess.ts) answers a paid
// request (POST /v1/ask, 10 credits) whose language engine hangs, or fails, and is killed with
// SIGKILL in the middle of it: the charge is stored, the answer never comes. Restarted on the same
// data, its credit-holds sweeper (the refund process manager's pass) refunds the charge exactly
// once (by the lease for the hang, by the failure event for the failure), GET /v1/account/status
// shows the balance a replay of the ledger gives, and the auditor says OK.
import t from 'tap'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { once } from 'node:events'
import { join } from 'node:path'
import { tempDir } from './support/tmp.ts'
import { freePorts } from './support/mcp.ts'
import { openSqliteEventStore } from '../adapters/sqlite/eventStore.ts'
import type { CreditEvent } from '../domain/credits/ledger.ts'
import { embeddedEnv } from './support/embeddedEnv.ts'
import { startServiceChild } from './support/serviceChild.ts'
import { auditAccount, creditEventsIn } from './support/ledger.ts'
import { pollUntil } from './support/pollUntil.ts'

const LEASE_SECONDS = 3
const inherited = embeddedEnv()

/** The language engine: an OpenAI-compatible endpoint that never answers, or answers 500. */
async function engineServer(mode: 'hang' | 'fail') {
  let arrived = 0
  const waiting: (() => void)[] = []
  const sockets = new Set<Socket>()
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume()
    arrived++
    for (const w of waiting.splice(0)) w()
    if (mode === 'fail') {
      res.writeHead(500, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: 'the model is down' } }))
    }
  })
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    arrived: () => arrived,
    firstRequest: () => (arrived > 0 ? Promise.resolve() : new Promise<void>((r) => waiting.push(r))),
    async close() {
      for (const s of sockets) s.destroy()
      server.close()
    },
  }
}

for (const mode of ['hang', 'fail'] as const) {
  t.test(`given the service killed while a paid ask's engine ${mode === 'hang' ? 'hangs' : 'fails'}, when it restarts, then the sweeper refunds once, the balance is the replay's and the auditor says OK`, async (t) => {
    const tmp = tempDir('refund-http-crash-')
    t.teardown(tmp.remove)
    const engine = await engineServer(mode)
    t.teardown(engine.close)
    const [port, mcpPort] = await freePorts(2)
    const env = {
      ...inherited,
      DATA_DIR: tmp.dir,
      PORT: String(port),
      MCP_PORT: String(mcpPort),
      LANGUAGE_ENGINE: 'remote',
      LLM_BASE_URL: engine.url,
      CREDIT_HOLD_LEASE_SECONDS: String(LEASE_SECONDS),
      CREDIT_HOLD_SWEEP_MS: '100',
      DIARIZATION: 'off',
    }
    const startService = (extra: Record<string, string> = {}) => startServiceChild(t, { ...env, ...extra })
    const events = openSqliteEventStore({ path: join(tmp.dir, 'events.db') })
    t.teardown(() => events.close())
    const ledger = (accountId: string) => creditEventsIn(events, accountId)
    const audit = (accountId: string) => auditAccount(accountId, env)

    // A hang is killed from outside once the engine has the request; a failure dies at the fault
    // point right after the failure is recorded.
    const first = await startService(mode === 'fail' ? { FAULT_INJECT: 'crash-after-charge-failed' } : {})
    const { accountId, apiKey, baseUrl } = first.ready
    const exited = once(first.child, 'exit')
    const answer = fetch(`${baseUrl}/v1/ask`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'What did we decide about the launch?' }),
    }).then(
      (r) => `answered ${r.status}`,
      () => 'no answer',
    )
    await Promise.race([engine.firstRequest(), new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the engine was never asked')), 30_000))])
    if (mode === 'hang') first.child.kill('SIGKILL')
    const [, signal] = await Promise.race([exited, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the service did not die')), 20_000))])
    t.equal(signal, 'SIGKILL', 'the service died by SIGKILL in the middle of the request')
    t.equal(await answer, 'no answer', 'the client got no answer')

    const before = await ledger(accountId)
    const charge = before.find((e): e is Extract<CreditEvent, { type: 'CreditsCharged' }> => e.type === 'CreditsCharged')
    t.match(charge?.data, { operation: 'ask', cost: 10, pending: true, balanceAfter: 4990 }, 'the pending charge was stored')
    t.equal(before.filter((e) => e.type === 'CreditsRefunded').length, 0, 'and not refunded before the crash')
    t.equal(before.some((e) => e.type === 'CreditsChargeFailed'), mode === 'fail', mode === 'fail' ? 'its failure was recorded' : 'nothing recorded its end')
    const chargeId = charge!.data.chargeId

    const second = await startService()
    const refunded = await pollUntil(
      'the refund',
      async () => (await ledger(accountId)).find((e): e is Extract<CreditEvent, { type: 'CreditsRefunded' }> => e.type === 'CreditsRefunded' && e.data.chargeId === chargeId),
      120_000,
    )
    t.match(refunded.data, { amount: 10, balanceAfter: 5000, reason: mode === 'hang' ? /never completed within the lease/ : /failed/ })
    if (mode === 'hang') t.ok(Date.parse(refunded.data.at) - Date.parse(charge!.data.at) >= LEASE_SECONDS * 1000, 'refunded only once the lease had run out')
    const ok = await pollUntil('the auditor to agree', async () => {
      const a = audit(accountId)
      return a.status === 0 ? a : null
    }, 30_000)
    t.same({ ok: ok.result.ok, problems: ok.result.problems, violations: ok.result.violations }, { ok: true, problems: [], violations: [] }, 'the auditor says OK')

    // Many sweeper passes later (every 100 ms, and the auditor took seconds): still one refund.
    const after = await ledger(accountId)
    t.equal(after.filter((e) => e.type === 'CreditsRefunded').length, 1, 'refunded exactly once')
    const replay = after.flatMap((e) => ('balanceAfter' in e.data ? [e.data.balanceAfter] : [])).at(-1)
    const status = (await (await fetch(`${baseUrl}/v1/account/status`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as { credits: { left: number; spent: number } }
    t.equal(status.credits.left, replay, `GET /v1/account/status shows the replay's balance (${replay})`)
    t.equal(ok.result.balance, replay, "and so does the auditor's")
    t.equal(status.credits.left, 5000, 'every credit is back')
    t.comment(`${mode}: ${after.map((e) => e.type).join(' → ')}; left ${status.credits.left}, spent ${status.credits.spent}, engine asked ${engine.arrived()} time(s)`)
    second.child.kill('SIGTERM')
    await once(second.child, 'exit')
  })
}
