// A transcription worker in a process of its own, on the same data directory as a test service
// (the SQLite event store is shared between processes; this process keeps its own job-queue
// read model). Prints "ready" once it polls. Used to kill a worker mid-job with SIGKILL.
import { join } from 'node:path'
import { openSqliteEventStore } from '../../adapters/sqlite/eventStore.ts'
import { openSqliteContentKeys } from '../../adapters/sqlite/contentKeys.ts'
import { shreddingEventStore } from '../../adapters/crypto/shreddingEventStore.ts'
import { openEmbeddedDocumentStore } from '../../adapters/embedded/documentStore.ts'
import { ffprobeMediaProbe } from '../../adapters/ffprobe/mediaProbe.ts'
import { loadConfig } from '../../app/config.ts'
import { createServices } from '../../app/services.ts'
import { transcriptionWorker } from '../../app/workers.ts'
import { startProjection } from '../../projections/runner.ts'
import { transcriptionJobsProjection } from '../../projections/transcriptionJobs.ts'
import { staticResolver, PUBLIC_HOSTS } from './service.ts'

const config = loadConfig(process.env)
const contentKeys = openSqliteContentKeys({ path: join(config.dataDir, 'keys.db') })
const events = shreddingEventStore(openSqliteEventStore({ path: join(config.dataDir, 'events.db') }), contentKeys)
const docs = openEmbeddedDocumentStore({ path: join(config.dataDir, `worker-${process.pid}.db`) })
const projections = [startProjection(transcriptionJobsProjection, { events, docs })]
const services = createServices(config, { events, docs, probe: ffprobeMediaProbe(), resolver: staticResolver(PUBLIC_HOSTS), projections, contentKeys })
const worker = transcriptionWorker(services, { workerId: process.env.WORKER_ID ?? `child-${process.pid}`, log: (m) => console.error(m) })
console.log('ready')
process.on('SIGTERM', async () => {
  await worker.stop()
  for (const p of projections) await p.stop()
  await events.close()
  await docs.close()
  process.exit(0)
})
