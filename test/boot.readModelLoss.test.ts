// Boot after read-model loss (issue 13, finding 3): the read-model store is deleted while the
// event store survives; the service starts again, its projections rebuild the read models from
// the log, and the demo seeding waits for the projections it reads instead of failing the start.
import t from 'tap'
import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../app/config.ts'
import { startService, type RunningService } from '../app/server.ts'
import { READ_MODEL_PROJECTIONS } from '../app/projections.ts'
import { CHECKPOINTS } from '../projections/runner.ts'
import { tempDir } from './support/tmp.ts'

const quiet = () => {}

const canonical = (v: unknown): string =>
  Array.isArray(v) ? `[${v.map(canonical).join(',')}]` : v && typeof v === 'object' ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}` : JSON.stringify(v)

async function snapshot(s: RunningService): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {}
  for (const p of READ_MODEL_PROJECTIONS) {
    for (const c of p.collections) {
      const docs = await s.services.docs.collection<{ _id: string }>(c).find({})
      out[c] = docs.map(canonical).sort()
    }
  }
  return out
}

t.test('given a service whose read-model store is lost, when it starts again, then it rebuilds the read models and serves', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const config = loadConfig({ DATA_DIR: tmp.dir, PORT: '0', MCP_PORT: '0', ASR_BASE_URL: 'http://127.0.0.1:9/v1', LOG_LEVEL: 'silent' })

  const first = await startService(config, quiet)
  // Everything the first start wrote, once its projections have caught up.
  const demo = await first.services.readiness()
  t.ok(demo.ready)
  const before = await snapshot(first)
  await first.close()

  for (const name of readdirSync(tmp.dir)) if (name.startsWith('readmodels')) rmSync(join(tmp.dir, name), { recursive: true, force: true })

  for (let boot = 1; boot <= 3; boot++) {
    const again = await startService(config, quiet)
    const ready = await again.app!.inject({ method: 'GET', url: '/readyz' })
    t.equal(ready.statusCode, 200, `boot ${boot}: ready`)
    for (const p of ready.json().projections) t.equal(p.state, 'running', `boot ${boot}: ${p.name} running`)
    const cps = await again.services.docs.collection(CHECKPOINTS).countDocuments({})
    t.ok(cps >= READ_MODEL_PROJECTIONS.length, `boot ${boot}: checkpoints written`)
    if (boot === 1) t.same(await snapshot(again), before, 'rebuilt read models equal the lost ones')
    await again.close()
    if (boot < 3) for (const name of readdirSync(tmp.dir)) if (name.startsWith('readmodels')) rmSync(join(tmp.dir, name), { recursive: true, force: true })
  }
})
