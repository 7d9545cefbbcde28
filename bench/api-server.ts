// The server half of bench/api.ts, in its own process. `service`: the real service on the
// embedded default with NOTES notes seeded through the event store; `bare`: a bare fastify app
// answering a payload of PAYLOAD_BYTES.
import Fastify from 'fastify'
import { randomUUID } from 'node:crypto'
import { loadConfig } from '../app/config.ts'
import { startService } from '../app/server.ts'
import { noteStream } from '../domain/notes/note.ts'

const mode = process.argv[2]

/**
 * TRACE=1: where a request's time goes in this process. Wraps the calls a POST /v1/notes makes
 * (authentication, the rate-limit counter, the event store's reads and appends, the
 * read-your-writes wait) and prints, on SIGTERM, the mean and p99 of each next to the whole
 * request (received to sent).
 */
function trace(service: Awaited<ReturnType<typeof startService>>) {
  const spans = new Map<string, number[]>()
  const add = (name: string, ms: number) => (spans.get(name) ?? spans.set(name, []).get(name)!).push(ms)
  const wrap = (obj: object | null | undefined, method: string, name: string) => {
    if (!obj) return
    const o = obj as Record<string, (...a: unknown[]) => unknown>
    const f = o[method]!.bind(obj)
    o[method] = (...a: unknown[]) => {
      const t0 = performance.now()
      const r = f(...a)
      return r instanceof Promise ? r.finally(() => add(name, performance.now() - t0)) : (add(name, performance.now() - t0), r)
    }
  }
  const s = service.services
  wrap(s.accounts, 'authenticate', 'authenticate (API key lookup)')
  wrap(s.counters, 'increment', 'rate-limit counter (shared store)')
  wrap(s.events, 'appendToStream', 'event store append (group commit, fsync)')
  wrap(s.events, 'readStream', 'event store readStream')
  wrap(s.sync, 'waitFor', 'read-your-writes wait')
  wrap(s.blobs, 'presignPut', 'presign upload URL')
  // The listener is up already (no more hooks): the HTTP server's own request event.
  const cpu = cpuPerRequest(service.app!.server)
  service.app!.server.on('request', (_req, res) => {
    const t0 = performance.now()
    res.on('finish', () => add('whole request (received to sent)', performance.now() - t0))
  })
  process.on('SIGTERM', () => {
    const lines = [...spans].map(([name, xs]) => {
      xs.sort((a, b) => a - b)
      const mean = xs.reduce((a, b) => a + b, 0) / xs.length
      return `  ${name.padEnd(44)} n=${String(xs.length).padStart(6)}  mean ${mean.toFixed(2).padStart(8)} ms  p50 ${xs[Math.floor(xs.length / 2)]!.toFixed(2).padStart(8)}  p99 ${xs[Math.floor(xs.length * 0.99)]!.toFixed(2).padStart(8)} ms`
    })
    lines.push(cpu())
    console.error(`TRACE pid ${process.pid}:\n${lines.join('\n')}`)
  })
}
/** A line giving this process's CPU time (user + system) from its first request on, per request answered. */
function cpuPerRequest(server: import('node:http').Server): () => string {
  let atFirst: NodeJS.CpuUsage | null = null
  let answered = 0
  server.on('request', (_req, res) => {
    atFirst ??= process.cpuUsage()
    res.on('finish', () => answered++)
  })
  return () => {
    const used = atFirst ? process.cpuUsage(atFirst) : { user: 0, system: 0 }
    return `  ${'CPU per request (user + system)'.padEnd(44)} ${((used.user + used.system) / 1000 / Math.max(1, answered)).toFixed(3)} ms over ${answered} requests`
  }
}
const send = (m: unknown) => process.send!(m)

/**
 * MIXED=1 (bench/api.ts): on `{ imports: n }` from the parent, appends the events of `n` URL
 * imports' whole lifecycle (created with a job, started, three progress reports, transcribed with
 * 20 segments, ready, settled) as the API and the workers would, and answers `{ imported: n }`.
 * The media fetch and the speech engine are left out: what is measured is the read models'
 * share of an import, not transcription.
 */
function answerImports(events: Awaited<ReturnType<typeof startService>>['services']['events'], accountId: string) {
  process.on('message', async (m: { imports?: number }) => {
    if (!m.imports) return
    for (let i = 0; i < m.imports; i++) {
      const noteId = randomUUID()
      const jobId = randomUUID()
      const at = () => new Date().toISOString()
      const stream = noteStream.of(noteId)
      const ev = (type: string, data: Record<string, unknown>) => ({ id: randomUUID(), type, data: { ...data, at: at() } })
      let r = await events.appendToStream(stream, [ev('NoteCreated', { noteId, accountId, sourceType: 'url', origin: 'audio', provider: null, sourceUrl: `https://example.com/${noteId}.mp3`, title: `Import ${noteId.slice(0, 8)}`, language: null, keepAudio: false, upload: null, jobId, reservationId: null })], { expectedRevision: 'no_stream' })
      r = await events.appendToStream(stream, [ev('TranscriptionStarted', { jobId, attempt: 1, retryAt: at() })], { expectedRevision: r.nextExpectedRevision })
      for (const percent of [25, 50, 75]) r = await events.appendToStream(stream, [ev('TranscriptionProgressed', { jobId, stage: 'transcribing', percent, attempt: 1, retryAt: at() })], { expectedRevision: r.nextExpectedRevision })
      const segments = Array.from({ length: 20 }, (_, k) => ({ id: randomUUID(), sequence: k, startMs: k * 3000, endMs: k * 3000 + 2900, speakerLabel: k % 2 ? 'B' : 'A', text: `segment ${k} of an imported talk about budgets and plans`, confidence: 0.9, locale: 'en', words: null }))
      const transcript = { language: 'en', languagesDetected: ['en'], durationSeconds: 60, engine: 'bench', provider: null, model: null, segments }
      r = await events.appendToStream(stream, [ev('NoteTranscribed', { transcript })], { expectedRevision: r.nextExpectedRevision })
      r = await events.appendToStream(stream, [ev('NoteReady', { durationSeconds: 60, language: 'en' })], { expectedRevision: r.nextExpectedRevision })
      await events.appendToStream(stream, [ev('TranscriptionSettled', { jobId })], { expectedRevision: r.nextExpectedRevision })
    }
    send({ imported: m.imports })
  })
}

if (mode === 'ceiling') {
  // The durable ceiling: a bare fastify route that appends one event to the embedded event store
  // (the same adapter: group commit, one fsync per group) and answers a same-sized object.
  const { openSqliteEventStore } = await import('../adapters/sqlite/eventStore.ts')
  const { join } = await import('node:path')
  const events = openSqliteEventStore({ path: join(process.env.DATA_DIR!, 'events.db') })
  const app = Fastify()
  app.post('/ceiling', async (req) => {
    const noteId = randomUUID()
    await events.appendToStream(`ceiling-${noteId}`, [{ id: randomUUID(), type: 'CeilingAppended', data: { noteId, body: req.body } }], { expectedRevision: 'no_stream' })
    return { ...(req.body as object), noteId, status: 'processing', next: 'x'.repeat(400) }
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  if (process.env.TRACE === '1') {
    const cpu = cpuPerRequest(app.server)
    process.on('SIGTERM', () => console.error(`TRACE ceiling pid ${process.pid}:\n${cpu()}`))
  }
  send({ port: (app.server.address() as { port: number }).port })
} else if (mode === 'roles') {
  // ROLES mode: one process of the service with the roles in ROLES (api, or projections), on the
  // embedded event store in DATA_DIR (shared by the processes) and MongoDB read models
  // (MONGO_URL: the embedded read-model store belongs to one process). SETUP=1 opens the bench
  // account and answers its API key.
  const roles = process.env.ROLES!
  const config = loadConfig({ ...process.env, PORT: '0', MCP_PORT: '0', RATE_LIMIT_MAX: '100000000', SEED_DEMO: '0', LOG_LEVEL: 'warn', ROLES: roles })
  const service = await startService(config, () => {})
  let apiKey: string | undefined
  if (process.env.SETUP === '1') {
    const { accountId } = await service.services.accounts.openAccount({ name: 'bench', plan: 'power' })
    apiKey = (await service.services.accounts.createApiKey(accountId)).apiKey
    answerImports(service.services.events, accountId)
  }
  if (process.env.TRACE === '1' && service.app) trace(service)
  const port = service.app ? (service.app.server.address() as { port: number }).port : 0
  send({ port, apiKey })
} else if (mode === 'bare') {
  const size = Number(process.env.PAYLOAD_BYTES ?? 8000)
  const payload = { notes: [{ text: 'x'.repeat(Math.max(0, size - 24)) }], hasMore: true }
  const app = Fastify()
  app.get('/bare', async () => payload)
  app.post('/bare', async (req) => ({ ...(req.body as object), noteId: randomUUID(), status: 'processing', next: 'x'.repeat(400) }))
  await app.listen({ port: 0, host: '127.0.0.1' })
  send({ port: (app.server.address() as { port: number }).port })
} else {
  const notes = Number(process.env.NOTES ?? 100_000)
  const config = loadConfig({ ...process.env, PORT: '0', RATE_LIMIT_MAX: '100000000', SEED_DEMO: '0', LOG_LEVEL: 'warn', ROLES: 'api,projections' })
  const service = await startService(config, () => {})
  const s = service.services
  const { accountId } = await s.accounts.openAccount({ name: 'bench', plan: 'power' })
  const { apiKey } = await s.accounts.createApiKey(accountId)
  const started = performance.now()
  const base = Date.parse('2026-01-01T00:00:00Z')
  let last = 0
  // 64 appends at a time: the event store commits concurrent appends together (one fsync).
  const seed = async (i: number) => {
    const noteId = randomUUID()
    const at = new Date(base + i * 1000).toISOString()
    const r = await s.events.appendToStream(noteStream.of(noteId), [
      {
        id: randomUUID(),
        type: 'NoteCreated',
        data: { noteId, accountId, sourceType: 'upload', origin: 'audio', provider: null, sourceUrl: null, title: `Meeting number ${i}`, language: null, keepAudio: false, upload: { filename: `m${i}.wav`, contentType: 'audio/wav', declaredBytes: null }, jobId: null, reservationId: null, at },
      },
    ], { expectedRevision: 'no_stream' })
    last = Math.max(last, r.lastGlobalPosition)
  }
  for (let i = 0; i < notes; i += 64) await Promise.all(Array.from({ length: Math.min(64, notes - i) }, (_, k) => seed(i + k)))
  await s.projections.find((p) => p.name === 'notes')!.waitFor(last, 600_000)
  const seedSeconds = (performance.now() - started) / 1000
  const port = (service.app!.server.address() as { port: number }).port
  const page = await fetch(`http://127.0.0.1:${port}/v1/notes?limit=20`, { headers: { authorization: `Bearer ${apiKey}` } })
  answerImports(s.events, accountId)
  send({ port, apiKey, seedSeconds, payloadBytes: (await page.text()).length })
}

// A clean exit on SIGTERM, so --cpu-prof can write its profile.
process.on('SIGTERM', () => process.exit(0))
