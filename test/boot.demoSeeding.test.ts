// Demo seeding (issue 31, item 4): the api-only process of the scale layout exited with
// `not_found` in demo seeding, which ran in every api process (waiting on read models that no
// process of its own projects) and even with SEED_DEMO=0. Now it runs only in the single-process
// start (api and projections together) and never with SEED_DEMO=0.
import t from 'tap'
import { loadConfig } from '../app/config.ts'
import { startService } from '../app/server.ts'
import { tempDir } from './support/tmp.ts'

const quiet = () => {}
const base = (dir: string) => ({ DATA_DIR: dir, PORT: '0', MCP_PORT: '0', HEALTH_PORT: '0', ASR_BASE_URL: 'http://127.0.0.1:9/v1', LOG_LEVEL: 'silent' })

t.test('given a fresh data directory, when an api-only process starts, then it starts and seeds nothing', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  // Before: it waited on read models no process projected, then failed with not_found.
  const s = await startService(loadConfig({ ...base(tmp.dir), ROLES: 'api' }), quiet)
  t.teardown(() => s.close())
  t.same((await s.services.events.readAll()).map((e) => e.type), [], 'no demo events')
})

t.test('given SEED_DEMO=0, when the single-process start runs, then it seeds nothing', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const s = await startService(loadConfig({ ...base(tmp.dir), SEED_DEMO: '0' }), quiet)
  t.teardown(() => s.close())
  t.same((await s.services.events.readAll()).map((e) => e.type), [], 'no demo events')
})

t.test('given the single-process start with the default SEED_DEMO, when it starts, then the demo library is seeded', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const s = await startService(loadConfig(base(tmp.dir)), quiet)
  t.teardown(() => s.close())
  t.ok((await s.services.events.readAll()).some((e) => e.metadata?.seed === 'mcp-demo'), 'the demo notes are in the log')
})
