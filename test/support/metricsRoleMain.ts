// One role of the service in a process of its own, as compose runs them (ROLES=api, projections,
// workers or forwarder, from the environment), on DATA_DIR. Prints one JSON line once it serves:
// its operator listener (METRICS_PORT), the REST host's address when it runs the api role, and
// the demo account's key. SIGTERM closes it.
import type { AddressInfo } from 'node:net'
import { loadConfig } from '../../app/config.ts'
import { startService } from '../../app/server.ts'
import { seedDemoAccount } from '../../app/demo.ts'

const config = loadConfig(process.env)
const service = await startService(config, (m) => console.error(m))
const demo = service.app ? await seedDemoAccount(service.services) : null
const rest = service.app ? (service.app.server.address() as AddressInfo) : null
console.log(JSON.stringify({ ready: true, metricsUrl: service.metricsUrl, baseUrl: rest ? `http://127.0.0.1:${rest.port}` : null, apiKey: demo?.apiKey ?? null }))
process.on('SIGTERM', async () => {
  await service.close()
  process.exit(0)
})
