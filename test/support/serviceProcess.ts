// The whole service in a process of its own, as `npm start` runs it (startService: REST, MCP,
// projections, workers) minus the dashboard build and the model downloads, on DATA_DIR. Prints
// one JSON line with the base URL and the demo account's key once it listens. Used to kill the
// service with SIGKILL at a fault point and start it again on the same data.
import { loadConfig } from '../../app/config.ts'
import { startService } from '../../app/server.ts'
import { seedDemoAccount } from '../../app/demo.ts'

const config = loadConfig(process.env)
const service = await startService(config, (m) => console.error(m))
const demo = await seedDemoAccount(service.services)
console.log(JSON.stringify({ ready: true, baseUrl: service.baseUrl, accountId: demo?.accountId, apiKey: demo?.apiKey }))
process.on('SIGTERM', async () => {
  await service.close()
  process.exit(0)
})
