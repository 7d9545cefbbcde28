// Issue 11 item 9: N concurrent requests of price P on a balance B give exactly floor(B/P)
// successes, whatever the operation and the edge. Black-box: REST over a real socket, MCP through
// the SDK client. A multi-template analysis holds its whole price in one reservation, so ten
// 8-template requests on 4,150 credits give 5 analyses (charging template by template gave 0:
// each request took a few templates, none got all eight, all were refunded).
import t, { type Test } from 'tap'
import { mcpTestService, structured, toolErrorBody } from './support/mcp.ts'
import { appendNote } from './support/notes.ts'
import { balance } from './support/ledger.ts'
import { MEETINGS } from './fixtures/meetings.ts'
import { TEMPLATES } from '../contract/analysis.ts'
import { PRICES } from '../domain/credits/prices.ts'

t.test('concurrent priced requests on a short balance', async (t) => {
  const s = await mcpTestService()
  t.teardown(s.close)
  const m = MEETINGS[2]!

  /** A pro account whose balance is exactly `b`, with one ready note. */
  const accountWith = async (b: number) => {
    const a = await s.account('pro')
    await s.services.credits.charge(a.accountId, { operation: PRICES.clip.operation, cost: 5000 - b } /* drained by clips: a priced charge the auditor accepts */)
    const { noteId } = await appendNote(s, a.accountId, { title: m.title, language: 'en', lines: m.lines })
    return { ...a, noteId }
  }
  const post = (a: { headers: Record<string, string> }, path: string, body: unknown) =>
    fetch(`${s.base}${path}`, { method: 'POST', headers: { ...a.headers, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as Record<string, any>,
    }))
  const audited = async (accountId: string) => {
    const r = await s.services.audit.account(accountId)
    return { ok: r!.ok, problems: r!.problems, balance: r!.balance }
  }
  const expectFloor = async (
    t: Test,
    label: string,
    a: { accountId: string },
    n: number,
    b: number,
    p: number,
    outcomes: { ok: boolean; error?: string }[],
  ) => {
    const ok = outcomes.filter((o) => o.ok).length
    const refused = outcomes.filter((o) => !o.ok)
    t.equal(ok, Math.floor(b / p), `${label}: ${ok} of ${n} succeed on ${b} at ${p} each (floor(B/P) = ${Math.floor(b / p)})`)
    t.ok(refused.every((o) => o.error === 'upgrade_required' || o.error === 'insufficient_credits'), `${label}: every refusal is a credit refusal (${[...new Set(refused.map((o) => o.error))].join(', ')})`)
    t.equal(await balance(s, a.accountId), b - ok * p, `${label}: the balance lost exactly the successes`)
    t.same(await audited(a.accountId), { ok: true, problems: [], balance: b - ok * p }, `${label}: the auditor's replay agrees`)
  }

  t.test('REST analysis: 10 × 8 templates (800) on 4,150 → 5', async (t) => {
    const a = await accountWith(4150)
    const templates = [...TEMPLATES].slice(0, 8)
    const rs = await Promise.all(Array.from({ length: 10 }, () => post(a, `/v1/notes/${a.noteId}/analysis`, { templates })))
    await expectFloor(t, 'analysis', a, 10, 4150, 800, rs.map((r) => ({ ok: r.status === 200, error: r.body.error })))
    t.ok(rs.filter((r) => r.status === 200).every((r) => r.body.report.ok.length === 8), 'each success has all eight templates')
  })

  t.test('REST deliverables: 6 × 300 on 1,000 → 3', async (t) => {
    const a = await accountWith(1000)
    const rs = await Promise.all(Array.from({ length: 6 }, () => post(a, `/v1/notes/${a.noteId}/deliverables`, { kind: 'email', template: 'follow_up', locale: 'en' })))
    await expectFloor(t, 'deliverables', a, 6, 1000, 300, rs.map((r) => ({ ok: r.status < 300, error: r.body.error })))
  })

  t.test('REST ask: 8 × 10 on 55 → 5', async (t) => {
    const a = await accountWith(55)
    const rs = await Promise.all(Array.from({ length: 8 }, () => post(a, `/v1/notes/${a.noteId}/ask`, { question: 'What was decided?' })))
    await expectFloor(t, 'ask', a, 8, 55, 10, rs.map((r) => ({ ok: r.status === 200, error: r.body.error })))
  })

  const viaTool = async (c: Awaited<ReturnType<typeof s.connect>>, name: string, args: Record<string, unknown>) => {
    const r = await c.callTool({ name, arguments: args })
    if (r.isError) return { ok: false, error: toolErrorBody(r).error as string }
    structured(r)
    return { ok: true }
  }

  t.test('MCP generate_ai_notes: 6 × 8 templates on 2,450 → 3', async (t) => {
    const a = await accountWith(2450)
    const templates = [...TEMPLATES].slice(0, 8)
    const clients = await Promise.all([0, 1, 2].map(() => s.connect(`${s.base}/mcp/stream`, a.headers)))
    const rs = await Promise.all(Array.from({ length: 6 }, (_, i) => viaTool(clients[i % 3]!, 'generate_ai_notes', { noteId: a.noteId, templates })))
    await expectFloor(t, 'generate_ai_notes', a, 6, 2450, 800, rs)
  })

  t.test('MCP ask_note: 8 × 10 on 35 → 3', async (t) => {
    const a = await accountWith(35)
    const c = await s.connect(`${s.base}/mcp/stream`, a.headers)
    const rs = await Promise.all(Array.from({ length: 8 }, () => viaTool(c, 'ask_note', { noteId: a.noteId, question: 'What was decided?' })))
    await expectFloor(t, 'ask_note', a, 8, 35, 10, rs)
  })
})
