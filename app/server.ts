// Composition root: opens the adapters from the configuration and starts the roles this
// process runs (api, projections, forwarder).
import type { Config } from './config.ts'
import { openDocumentStore, openEventStore } from './infrastructure.ts'
import { startProjection, type Projection, type RunningProjection } from '../projections/runner.ts'
import { ledgerProjection } from '../projections/ledger.ts'
import { CommandHandler } from '../commands/handleCommand.ts'
import { CreditCommands } from '../commands/credits.ts'
import { buildApp } from '../api/buildApp.ts'

export const READ_MODEL_PROJECTIONS: Projection[] = [ledgerProjection]

export async function startService(config: Config, log: (msg: string) => void = console.log) {
  const events = await openEventStore(config)
  const docs = await openDocumentStore(config)
  const handler = new CommandHandler(events)
  const credits = new CreditCommands(handler)
  const running: RunningProjection[] = []
  if (config.roles.has('projections')) {
    for (const p of READ_MODEL_PROJECTIONS) running.push(startProjection(p, { events, docs }))
  }
  let closePublisher = async () => {}
  if (config.roles.has('forwarder') && config.kafkaBrokers.length > 0) {
    const { openKafkaPublisher } = await import('../adapters/kafka/kafkaPublisher.ts')
    const { analyticsForwarder } = await import('../projections/analyticsForwarder.ts')
    const publisher = await openKafkaPublisher({ brokers: config.kafkaBrokers, clientId: 'notes-forwarder' })
    running.push(startProjection(analyticsForwarder(publisher, { topicPrefix: config.kafkaTopicPrefix }), { events, docs }))
    closePublisher = () => publisher.close()
    log(`forwarding events to Kafka at ${config.kafkaBrokers.join(',')} (topics ${config.kafkaTopicPrefix}<category>)`)
  }
  const app = config.roles.has('api') ? buildApp({ projections: running, version: '1.0.0' }) : null
  if (app) await app.listen({ port: config.port, host: config.host })
  return {
    events,
    docs,
    credits,
    app,
    baseUrl: `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${config.port}`,
    async close() {
      await app?.close()
      for (const p of running) await p.stop()
      await closePublisher()
      await events.close()
      await docs.close()
    },
  }
}
