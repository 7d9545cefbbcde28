// Traces through the event log (issue 30): one POST /v1/notes is one trace, from the API through
// the append, the projections, the worker that takes the job and the Kafka publish, recorded by
// an in-memory exporter; the trace context and the correlation and causation ids travel in the
// events' metadata and in the Kafka message's headers.
import t from 'tap'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomBytes } from 'node:crypto'
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace'
import { startTracing } from '../adapters/opentelemetry/tracing.ts'
import { readKafkaTopics } from '../adapters/kafka/kafkaPublisher.ts'
import { installTracer, noopTracer } from '../ports/tracing.ts'
import { loadConfig } from '../app/config.ts'
import { startService } from '../app/server.ts'
import { seedDemoAccount } from '../app/demo.ts'
import { noteStream } from '../domain/notes/note.ts'
import { tempDir } from './support/tmp.ts'
import { pollUntil } from './support/pollUntil.ts'

const brokers = process.env.KAFKA_BROKERS
const mongoUrl = process.env.MONGO_URL
if (!brokers) {
  t.comment('KAFKA_BROKERS is not set: the trace propagation test publishes to Kafka (npm test starts it; scripts/servers/kafka.sh)')
} else {
  t.test('given tracing on, when a client posts a note, then one trace shows the API, the append, the projections, the worker and the Kafka publish', async (t) => {
    const exporter = new InMemorySpanExporter()
    const tracing = startTracing({ serviceName: 'notes-test', spanProcessors: [new SimpleSpanProcessor({ exporter })] })
    installTracer(tracing.tracer)
    t.teardown(async () => {
      installTracer(noopTracer)
      await tracing.shutdown()
    })
    const tmp = tempDir()
    t.teardown(tmp.remove)
    // The link the note imports answers 404: the worker takes the job, and fails it.
    const host: Server = createServer((_req, res) => res.writeHead(404).end())
    await new Promise<void>((r) => host.listen(0, '127.0.0.1', r))
    t.teardown(() => host.close())
    const topicPrefix = `trace-${Date.now()}.`
    const mongoDb = `trace_${Date.now()}`
    // Imported here, not above: the driver must load after startTracing for its spans to be recorded.
    if (mongoUrl) t.teardown(async () => (await import('../adapters/mongodb/documentStore.ts')).dropMongoDatabase(mongoUrl, mongoDb))
    const service = await startService(
      loadConfig({
        DATA_DIR: tmp.dir,
        PORT: '0',
        MCP_PORT: '0',
        ASR_BASE_URL: 'http://127.0.0.1:9/v1',
        LOG_LEVEL: 'silent',
        IMPORT_ALLOW_HOSTS: '127.0.0.1',
        KAFKA_BROKERS: brokers,
        KAFKA_TOPIC_PREFIX: topicPrefix,
        JOB_POLL_MS: '50',
        // On MongoDB (FerretDB in `npm test`) the driver's own spans join the trace too.
        ...(mongoUrl ? { MONGO_URL: mongoUrl, MONGO_DB: mongoDb } : {}),
      }),
      () => {},
    )
    t.teardown(() => service.close())
    const demo = (await seedDemoAccount(service.services))!
    const base = `http://127.0.0.1:${(service.app!.server.address() as AddressInfo).port}`

    // The client's own trace: the API continues it.
    const traceId = randomBytes(16).toString('hex')
    const clientSpan = randomBytes(8).toString('hex')
    const res = await fetch(`${base}/v1/notes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${demo.apiKey}`, 'content-type': 'application/json', traceparent: `00-${traceId}-${clientSpan}-01` },
      body: JSON.stringify({ audioUrl: `http://127.0.0.1:${(host.address() as AddressInfo).port}/episode.mp3` }),
    })
    t.equal(res.status, 202)
    const { noteId } = (await res.json()) as { noteId: string }
    const stream = noteStream.of(noteId)
    const noteTopic = `${topicPrefix}note`

    const inTrace = () => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId)
    const named = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name)
    const spans = await pollUntil(
      'the trace reaches the projections, the worker and Kafka',
      () => {
        const all = inTrace()
        const has = (name: string) => named(all, name).length > 0
        return has('POST /v1/notes') && has('project notes') && has('project transcription-jobs') && has(`kafka publish ${noteTopic}`) && has('transcription job') ? all : null
      },
      60_000,
    )
    const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId
    const [server] = named(spans, 'POST /v1/notes')
    t.equal(parentOf(server!), clientSpan, "the API's span is a child of the caller's")
    t.equal(server!.attributes['http.response.status_code'], 202)
    const append = named(spans, 'eventstore append').find((s) => s.attributes['notes.stream'] === stream && parentOf(s) === server!.spanContext().spanId)
    t.ok(append, "the note's append is a child of the request")
    const appendId = append!.spanContext().spanId
    for (const name of ['project notes', 'project transcription-jobs', `kafka publish ${noteTopic}`]) {
      t.ok(named(spans, name).some((s) => parentOf(s) === appendId), `${name} is a child of the append`)
    }
    const job = named(spans, 'transcription job')[0]!
    t.equal(parentOf(job), appendId, "the worker's job continues the trace of the event that queued it")
    t.ok(named(spans, 'eventstore append').some((s) => s.attributes['notes.stream'] === stream && parentOf(s) === job.spanContext().spanId), "the worker's appends are children of its job")

    if (mongoUrl) {
      // The driver's spans join the trace where our code calls it (the request's key lookup, the
      // projections' reads and writes), as children of the span active at the call.
      const driver = await pollUntil('MongoDB spans under ours', () => {
        const all = inTrace()
        const ids = new Set(all.filter((s) => s.instrumentationScope.name !== '@opentelemetry/instrumentation-mongodb').map((s) => s.spanContext().spanId))
        const under = all.filter((s) => s.instrumentationScope.name === '@opentelemetry/instrumentation-mongodb' && ids.has(parentOf(s)!))
        return under.length > 0 ? under : null
      }, 30_000)
      t.ok(driver.length > 0, `MongoDB's spans are in the trace, under ours (${[...new Set(driver.map((s) => s.name))].join(', ')})`)
    } else t.comment('MONGO_URL is not set: the MongoDB driver spans are not checked')

    // The same lineage in the log: correlation and causation ids, and the trace context.
    const events = (await service.services.events.readStream(stream)).events
    const created = events.find((e) => e.type === 'NoteCreated')!
    t.equal(created.metadata.correlationId, created.metadata.requestId, 'a request starts the correlation')
    t.equal(created.metadata.causationId, created.metadata.requestId)
    t.match(created.metadata.traceparent, new RegExp(`^00-${traceId}-${appendId}-01$`))
    const started = await pollUntil('the worker took the job', async () => (await service.services.events.readStream(stream)).events.find((e) => e.type === 'TranscriptionStarted'), 30_000)
    t.equal(started.metadata.causationId, created.id, "the worker's event was caused by the note's creation")
    t.equal(started.metadata.correlationId, created.metadata.correlationId, 'in the same correlation')
    t.match(started.metadata.traceparent, new RegExp(`^00-${traceId}-`))

    // And on the topic: a consumer continues the trace from the message's headers.
    const messages = await readKafkaTopics({ brokers: brokers.split(','), clientId: 'trace-test', topics: [noteTopic] })
    const message = messages.find((m) => m.headers['event-id'] === created.id)
    t.ok(message, 'the NoteCreated message is on the topic')
    const publish = named(spans, `kafka publish ${noteTopic}`).find((s) => s.attributes['messaging.message.id'] === created.id)!
    t.equal(message!.headers.traceparent, `00-${traceId}-${publish.spanContext().spanId}-01`, "the message carries its publish span's context")
  })
}
