// `npm start`: the service on the embedded default (SQLite events and read models under
// DATA_DIR), or on EventStoreDB / MongoDB / Kafka when ESDB_URL / MONGO_URL / KAFKA_BROKERS are set.
import { loadConfig } from '../app/config.ts'
import { startService } from '../app/server.ts'

const config = loadConfig()
const service = await startService(config)
console.log(`notes service listening on ${service.baseUrl}`)
console.log(`  event store: ${config.esdbUrl ? `EventStoreDB ${config.esdbUrl}` : `SQLite ${config.dataDir}/events.db`}`)
console.log(`  read models: ${config.mongoUrl ? `MongoDB ${config.mongoUrl}` : `embedded ${config.dataDir}/readmodels.db`}`)
console.log(`  try: curl ${service.baseUrl}/health`)

const shutdown = async (signal: string) => {
  console.log(`${signal}: shutting down`)
  await service.close()
  process.exit(0)
}
process.on('SIGINT', () => void shutdown('SIGINT'))
process.on('SIGTERM', () => void shutdown('SIGTERM'))
