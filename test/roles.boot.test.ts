// Start-up that cannot race itself (issue 31, item 4), and a health port per role (item 1): the
// four roles started at once as four processes on one data directory (the embedded default:
// one SQLite event log and one read-model file they all open) each come up, each says where its
// health port is, none says it listens unless it has an API, and each /readyz says what it
// depends on. Kafka is not running: the forwarder starts anyway and its /readyz says so.
import t from 'tap'
import { join } from 'node:path'
import { freePort } from './support/ports.ts'
import { tempDir } from './support/tmp.ts'
import { startRole, eventually, type RoleProcess } from './support/roleProcess.ts'

t.test('given a fresh data directory, when api, projections, workers and forwarder start at once, then each boots, serves its health port and stops cleanly', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  const [port, mcpPort, deadKafka] = [await freePort(), await freePort(), await freePort()]
  const env = {
    DATA_DIR: tmp.dir,
    PORT: String(port),
    MCP_PORT: String(mcpPort),
    ASR_BASE_URL: 'http://127.0.0.1:9/v1',
    MODELS_DIR: join(process.cwd(), '.ci', 'models'),
    SPEAKER_EMBEDDING_MODEL: join(tmp.dir, 'no-speaker-model.pt'),
    DIARIZATION: 'off',
    KAFKA_BROKERS: `127.0.0.1:${deadKafka}`,
    FORWARDER_MAX_DOWN_SECONDS: '1',
  }
  const roles: RoleProcess[] = ['api', 'projections', 'workers', 'forwarder'].map((role) => startRole(role, env))
  t.teardown(async () => void (await Promise.all(roles.map((r) => r.stop('SIGKILL')))))
  const [api, projections, workers, forwarder] = roles as [RoleProcess, RoleProcess, RoleProcess, RoleProcess]

  for (const r of roles) {
    await eventually(`${r.role} to print its health port`, async () => r.exited() ? Promise.reject(new Error(`${r.role} exited:\n${r.out()}`)) : r.healthUrl(), 120_000)
    const alive = await fetch(`${r.healthUrl()}/healthz`)
    t.match({ status: alive.status, body: await alive.json() }, { status: 200, body: { status: 'ok', roles: [r.role] } }, `${r.role}: alive on its health port`)
  }
  await eventually('the api to listen', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 120_000)
  t.match(api.out(), /listening on http:\/\/127\.0\.0\.1:/, 'the api says it listens')
  for (const r of [projections, workers, forwarder]) {
    t.notMatch(r.out(), /listening on/, `${r.role}: no listening line without a listener`)
    t.notMatch(r.out(), /SQLITE_BUSY|Error:/, `${r.role}: no start-up error`)
  }

  // The api is ready once the projections process has written the read models' checkpoints.
  const ready = await eventually('the api to be ready', async () => {
    const r = await api.readyz()
    return r.status === 200 && r
  })
  t.match(ready.body, { status: 'ready', roles: ['api'], reasons: [], readModelStore: { reachable: true }, blobStore: { reachable: true }, kafka: null })
  t.ok((ready.body.projections as { inThisProcess: boolean }[]).every((p) => !p.inThisProcess), 'the api reads every read model projected elsewhere')
  const proj = await eventually('the projections process to be ready', async () => {
    const r = await projections.readyz()
    return r.status === 200 && r
  })
  t.match(proj.body, { blobStore: null, kafka: null })
  t.ok((proj.body.projections as { inThisProcess: boolean; state: string }[]).every((p) => p.inThisProcess && p.state === 'running'), 'its own loops run')
  // Kafka does not answer: after FORWARDER_MAX_DOWN_SECONDS the forwarder is not ready, and says why.
  const fwd = await eventually('the forwarder to say Kafka is down', async () => {
    const r = await forwarder.readyz()
    return r.status === 503 && r
  })
  t.match(fwd.body, { error: 'service_unavailable', readModelStore: null, blobStore: null, kafka: { state: /down|connecting/ }, forwarder: { name: 'analytics-forwarder' } })
  t.match(fwd.body.reasons, [/^kafka: the forwarder cannot publish for \d+ s/])
  t.equal((await workers.readyz()).body.kafka, null)

  for (const r of roles) t.equal(await r.stop(), 0, `${r.role}: exits 0 on SIGTERM`)
})
