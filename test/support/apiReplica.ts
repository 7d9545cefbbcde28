// One process of the service as a replica: startService with the roles in ROLES on the
// configuration in its environment (DATA_DIR shared: the SQLite event store; MONGO_URL/MONGO_DB:
// the read models). SETUP=1 opens a `power` account with an API key, and SETUP_PERSON=<email> a
// person of it who signs in to the dashboard with the password `correct horse battery staple`.
// Prints one JSON line ({ port, mcpPort, apiKey? }) once it listens; SIGTERM closes it.
import { loadConfig } from '../../app/config.ts'
import { startService } from '../../app/server.ts'

const config = loadConfig({ ...process.env, PORT: '0', MCP_PORT: '0', HOST: '127.0.0.1', SEED_DEMO: '0', LOG_LEVEL: 'warn' })
const service = await startService(config, () => {})
let apiKey: string | undefined
if (process.env.SETUP === '1') {
  const { accountId } = await service.services.accounts.openAccount({ name: 'replica test', plan: 'power' })
  apiKey = (await service.services.accounts.createApiKey(accountId)).apiKey
  const email = process.env.SETUP_PERSON
  if (email) await service.services.persons.register({ accountId, email, password: 'correct horse battery staple', name: 'Pat Example' })
}
const portOf = (app: typeof service.app) => (app ? (app.server.address() as { port: number }).port : 0)
console.log(JSON.stringify({ port: portOf(service.app), mcpPort: portOf(service.mcpApp), apiKey }))
process.on('SIGTERM', () => {
  void service.close().finally(() => process.exit(0))
})
